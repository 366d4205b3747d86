"""Research programs of five kinds, each written twice: with HIPS autograd (``*_autograd.py``:
``import autograd.numpy as np``) and with nx_rune (``*_nx.py``), on the same data
(``data.py``, NumPy only), so that the two compute the same numbers.

* ``logistic``: logistic regression on 500 x 300 float64 features, gradient descent.
* ``char_rnn``: a character RNN (tanh cell, 20 steps, softmax cross-entropy).
* ``svi``: black-box stochastic variational inference with the reparameterization trick
  (a diagonal Gaussian over the 20 weights of a Bayesian logistic regression).
* ``fluid``: a 2-D stencil simulation (advection, diffusion, a pressure projection through a
  conjugate-gradient solve) on a 32 x 32 periodic grid, differentiated end to end.
* ``gmm``: a Gaussian mixture's log-likelihood, its gradient and Hessian-vector products.

``benchmarks/bench_programs.py`` times them side by side; ``tests/test_programs.py`` checks
that each pair agrees to float64 round-off.
"""
