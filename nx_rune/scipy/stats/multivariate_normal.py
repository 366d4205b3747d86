"""``nx.scipy.stats.multivariate_normal`` as a submodule (``import
nx_rune.scipy.stats.multivariate_normal as mvn``): the functions of ``nx_rune.scipy._mvn``."""
from nx_rune.scipy._mvn import *  # noqa: F401,F403
from nx_rune.scipy._mvn import __all__  # noqa: F401
