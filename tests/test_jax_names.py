"""JAX names programs reach for: custom_gradient, pure_callback, experimental.io_callback,
numpy.vectorize / piecewise, image.resize / scale_and_translate, checkpoint(policy=...) and
checkpoint_policies, ensure_compile_time_eval, named_scope, tree_util.Partial, typing, Array.
Values against NumPy and JAX 0.10.2's numbers (pinned below, computed with jax_enable_x64 by
the same expressions with nx -> jax), derivatives against finite differences, and bad input."""
import numpy as np
import pytest

import nx_rune as nx
import nx_rune.numpy as jnp

# -- golden values: jax 0.10.2 (x64) ---------------------------------------------------------------
CG_GRAD = [0.955336489125606, 0.3623577544766736, -0.4161468365471424]
CG_GRAD2 = [-0.29552020666133955, -0.9320390859672263, 0.9092974268256817]
CG_TWO = [200.0, 120.0]
RESIZE_GRAD_CUBIC = [[0.5655442910302865, 1.034698430104866, 1.5480251157990732,
                      2.4900356797145604, 2.349506080874429],
                     [4.157353741170071, 5.36588968826711, 5.330869853041178, 6.772090900195875,
                      5.881084259018236],
                     [7.838080603047475, 9.81644177615809, 9.240138578891367, 11.222642988086854,
                      9.561811120895639],
                     [11.849039253839809, 14.678140051802657, 13.532129242966056,
                      16.13347730141235, 13.63300104368395]]
RESIZE = {('nearest', True, (6, 7)): [[0.0, 0.14285714285714285, 0.14285714285714285,
                                       0.4040610178208843, 0.7423074889580903, 0.7423074889580903,
                                       1.1428571428571428],
                                      [1.5971914124998499, 2.0995626366712954, 2.0995626366712954,
                                       2.6457513110645903, 3.2324881425670746, 3.2324881425670746,
                                       3.857142857142857],
                                      [1.5971914124998499, 2.0995626366712954, 2.0995626366712954,
                                       2.6457513110645903, 3.2324881425670746, 3.2324881425670746,
                                       3.857142857142857],
                                      [4.5175395145262565, 5.211838956272771, 5.211838956272771,
                                       5.938459911664722, 6.696023797290266, 6.696023797290266,
                                       7.483314773547883],
                                      [8.299250027587322, 9.142857142857142, 9.142857142857142,
                                       10.013256519357174, 10.909647481163876, 10.909647481163876,
                                       11.831297132467542],
                                      [8.299250027587322, 9.142857142857142, 9.142857142857142,
                                       10.013256519357174, 10.909647481163876, 10.909647481163876,
                                       11.831297132467542]],
          ('nearest', True, (3, 2)): [[0.14285714285714285, 0.7423074889580903],
                                      [5.211838956272771, 6.696023797290266],
                                      [9.142857142857142, 10.909647481163876]],
          ('linear', True, (6, 7)): [[0.0, 0.08163265306122448, 0.21748682141821185,
                                      0.4040610178208843, 0.6456656400617458, 0.9139716263433986,
                                      1.1428571428571428],
                                     [0.7985957062499249, 0.982946668258093, 1.23655168252951,
                                      1.5249061644427373, 1.8552573439569127, 2.207084466150047,
                                      2.5],
                                     [2.083916096170917, 2.389264244990321, 2.7829212769552756,
                                      3.194536077831278, 3.6339703686810365, 4.089070124244977,
                                      4.461504843210361],
                                     [4.030814830855188, 4.4092784911317615, 4.892140210213146,
                                      5.389675144898033, 5.910455651996866, 6.444561397398105,
                                      6.878952787480378],
                                     [6.4083947710567895, 6.847796644490028, 7.405493811263812,
                                      7.975858215510948, 8.56655637530818, 9.169037202275918,
                                      9.657305953007713],
                                     [8.299250027587322, 8.781311236312934, 9.391542679000008,
                                      10.013256519357174, 10.653535777790534, 11.304640188865449,
                                      11.831297132467542]],
          ('linear', True, (3, 2)): [[0.7634146954214976, 1.5098620220608383],
                                     [3.6694386108905284, 4.976642467730497],
                                     [7.97385324358493, 9.655272714985756]],
          ('linear', False, (6, 7)): [[0.0, 0.08163265306122448, 0.21748682141821185,
                                       0.4040610178208843, 0.6456656400617458, 0.9139716263433986,
                                       1.1428571428571428],
                                      [0.7985957062499249, 0.982946668258093, 1.23655168252951,
                                       1.5249061644427373, 1.8552573439569127, 2.207084466150047,
                                       2.5],
                                      [2.083916096170917, 2.389264244990321, 2.7829212769552756,
                                       3.194536077831278, 3.6339703686810365, 4.089070124244977,
                                       4.461504843210361],
                                      [4.030814830855188, 4.4092784911317615, 4.892140210213146,
                                       5.389675144898033, 5.910455651996866, 6.444561397398105,
                                       6.878952787480378],
                                      [6.4083947710567895, 6.847796644490028, 7.405493811263812,
                                       7.975858215510948, 8.56655637530818, 9.169037202275918,
                                       9.657305953007713],
                                      [8.299250027587322, 8.781311236312934, 9.391542679000008,
                                       10.013256519357174, 10.653535777790534, 11.304640188865449,
                                       11.831297132467542]],
          ('linear', False, (3, 2)): [[0.4182806860571199, 1.2668127222292145],
                                      [3.506116963232288, 5.140749181282845],
                                      [8.283006819339096, 10.432191001883938]],
          ('cubic', True, (6, 7)): [[-0.11202235719734911, -0.05449535488223975,
                                     0.0720999670413926, 0.25658139326537777, 0.479534719043101,
                                     0.7698058536914472, 0.9867598443773944],
                                    [0.5623148682022227, 0.7225455321429849, 0.9826183897498466,
                                     1.2652853557826207, 1.5777368614080796, 1.958668643014692,
                                     2.2357829059763925],
                                    [1.9656536497455952, 2.263340742581789, 2.704550019464605,
                                     3.124661314591987, 3.56388914556053, 4.0747322797081695,
                                     4.438572291617471],
                                    [3.926815241587504, 4.292190040353796, 4.82898746777748,
                                     5.3322508585228245, 5.851827465711616, 6.448601113246611,
                                     6.871046498461405],
                                    [6.645699864830354, 7.0763810318208265, 7.705525386444002,
                                     8.289393915772498, 8.887417828753165, 9.568721568476901,
                                     10.049054476408589],
                                    [8.49833240360389, 8.967094567122494, 9.650190348133156,
                                     10.281335243547463, 10.925570469866079, 11.656888210347576,
                                     12.171551848370639]],
          ('cubic', True, (3, 2)): [[0.4332160202777582, 1.2296853450455567],
                                    [3.5045209965482385, 5.009632473335059],
                                    [8.236189747420497, 10.198542239991406]],
          ('cubic', False, (6, 7)): [[-0.11202235719734911, -0.05449535488223975,
                                      0.0720999670413926, 0.25658139326537777, 0.479534719043101,
                                      0.7698058536914472, 0.9867598443773944],
                                     [0.5623148682022227, 0.7225455321429849, 0.9826183897498466,
                                      1.2652853557826207, 1.5777368614080796, 1.958668643014692,
                                      2.2357829059763925],
                                     [1.9656536497455952, 2.263340742581789, 2.704550019464605,
                                      3.124661314591987, 3.56388914556053, 4.0747322797081695,
                                      4.438572291617471],
                                     [3.926815241587504, 4.292190040353796, 4.82898746777748,
                                      5.3322508585228245, 5.851827465711616, 6.448601113246611,
                                      6.871046498461405],
                                     [6.645699864830354, 7.0763810318208265, 7.705525386444002,
                                      8.289393915772498, 8.887417828753165, 9.568721568476901,
                                      10.049054476408589],
                                     [8.49833240360389, 8.967094567122494, 9.650190348133156,
                                      10.281335243547463, 10.925570469866079, 11.656888210347576,
                                      12.171551848370639]],
          ('cubic', False, (3, 2)): [[0.2711974389459678, 1.1067346608929478],
                                     [3.352613156290146, 5.060715716914761],
                                     [8.487348475255109, 10.729758321788797]],
          ('lanczos3', True, (6, 7)): [[-0.06705035391589892, -0.01971071226703397,
                                        0.11043072645627805, 0.29146337789839527,
                                        0.48988166549506873, 0.8191372380484397,
                                        1.0190274028358577],
                                       [0.4952807674263821, 0.6342802902297828, 0.9090514264270109,
                                        1.1721371322499028, 1.4495436475500634, 1.8727116124987906,
                                        2.124303362156551],
                                       [1.9510652577870184, 2.2322698781755865, 2.7352788952268114,
                                        3.134443158567283, 3.543366677996985, 4.125709608155745,
                                        4.465407829136915],
                                       [3.7658009788380356, 4.102908752532884, 4.702631955492602,
                                        5.17127247680536, 5.648307716403086, 6.318046915701842,
                                        6.706954438010065],
                                       [6.8129290589992095, 7.210306133830111, 7.915122031237894,
                                        8.460843962315613, 9.013939540017912, 9.782757438375581,
                                        10.227727281860421],
                                       [8.518076420023029, 8.948271552411448, 9.70928098569655,
                                        10.294687434920176, 10.88694528511545, 11.706517712700581,
                                        12.180176778792037]],
          ('lanczos3', True, (3, 2)): [[0.3360936967516382, 1.1556237583403066],
                                       [3.4109258066616213, 4.9987736989210285],
                                       [8.303765573380641, 10.371302409018394]],
          ('lanczos3', False, (6, 7)): [[-0.06705035391589892, -0.01971071226703397,
                                         0.11043072645627805, 0.29146337789839527,
                                         0.48988166549506873, 0.8191372380484397,
                                         1.0190274028358577],
                                        [0.4952807674263821, 0.6342802902297828,
                                         0.9090514264270109, 1.1721371322499028,
                                         1.4495436475500634, 1.8727116124987906,
                                         2.124303362156551],
                                        [1.9510652577870184, 2.2322698781755865,
                                         2.7352788952268114, 3.134443158567283, 3.543366677996985,
                                         4.125709608155745, 4.465407829136915],
                                        [3.7658009788380356, 4.102908752532884, 4.702631955492602,
                                         5.17127247680536, 5.648307716403086, 6.318046915701842,
                                         6.706954438010065],
                                        [6.8129290589992095, 7.210306133830111, 7.915122031237894,
                                         8.460843962315613, 9.013939540017912, 9.782757438375581,
                                         10.227727281860421],
                                        [8.518076420023029, 8.948271552411448, 9.70928098569655,
                                         10.294687434920176, 10.88694528511545, 11.706517712700581,
                                         12.180176778792037]],
          ('lanczos3', False, (3, 2)): [[0.211136299074484, 1.0605975325502028],
                                        [3.168760849975838, 4.94997706415789],
                                        [8.510923078808235, 10.82060165693066]],
          ('lanczos5', True, (6, 7)): [[-0.17987467751057615, -0.1498315099334567,
                                        0.012659614947064912, 0.16081647327965842,
                                        0.327789527508967, 0.6882476249352195,
                                        0.8760753269953098],
                                       [0.7228129945513221, 0.8492169804742125, 1.1984063382959216,
                                        1.4242207017300377, 1.6651186227870545, 2.1591376386920347,
                                        2.3995756145701517],
                                       [1.8515007659588165, 2.106866874303317, 2.7082693477149515,
                                        3.041033904910774, 3.3838570759793347, 4.061853671307923,
                                        4.375318073739457],
                                       [3.7432574110817622, 4.052895338302693, 4.773148788396298,
                                        5.166955493062932, 5.569329361732044, 6.35600950712078,
                                        6.716199331747161],
                                       [6.6739851557870775, 7.024452944190127, 7.8395959247096005,
                                        8.286089087661932, 8.740676135908997, 9.624032404648027,
                                        10.027158608905054],
                                       [8.608520415479543, 9.004884513948909, 9.916642286290422,
                                        10.409721554499423, 10.909768351866983, 11.876696749612426,
                                        12.315203675186417]],
          ('lanczos5', True, (3, 2)): [[0.3430859976456906, 1.1829106046909248],
                                       [3.3676600474225573, 5.000020123180854],
                                       [8.290427300533393, 10.406418663567294]],
          ('lanczos5', False, (6, 7)): [[-0.17987467751057615, -0.1498315099334567,
                                         0.012659614947064912, 0.16081647327965842,
                                         0.327789527508967, 0.6882476249352195,
                                         0.8760753269953098],
                                        [0.7228129945513221, 0.8492169804742125,
                                         1.1984063382959216, 1.4242207017300377,
                                         1.6651186227870545, 2.1591376386920347,
                                         2.3995756145701517],
                                        [1.8515007659588165, 2.106866874303317, 2.7082693477149515,
                                         3.041033904910774, 3.3838570759793347, 4.061853671307923,
                                         4.375318073739457],
                                        [3.7432574110817622, 4.052895338302693, 4.773148788396298,
                                         5.166955493062932, 5.569329361732044, 6.35600950712078,
                                         6.716199331747161],
                                        [6.6739851557870775, 7.024452944190127, 7.8395959247096005,
                                         8.286089087661932, 8.740676135908997, 9.624032404648027,
                                         10.027158608905054],
                                        [8.608520415479543, 9.004884513948909, 9.916642286290422,
                                         10.409721554499423, 10.909768351866983,
                                         11.876696749612426, 12.315203675186417]],
          ('lanczos5', False, (3, 2)): [[0.3195229122525673, 1.2217169637375465],
                                        [3.0050392771058223, 4.881119971110154],
                                        [8.364488236099435, 10.743381063596983]],
          ('cubic-pytorch', True, (6, 7)): [[-0.11202235719734911, -0.05449535488223975,
                                             0.0720999670413926, 0.25658139326537777,
                                             0.479534719043101, 0.7698058536914472,
                                             0.9867598443773944],
                                            [0.5623148682022227, 0.7225455321429849,
                                             0.9826183897498466, 1.2652853557826207,
                                             1.5777368614080796, 1.958668643014692,
                                             2.2357829059763925],
                                            [1.9656536497455952, 2.263340742581789,
                                             2.704550019464605, 3.124661314591987,
                                             3.56388914556053, 4.0747322797081695,
                                             4.438572291617471],
                                            [3.926815241587504, 4.292190040353796,
                                             4.82898746777748, 5.3322508585228245,
                                             5.851827465711616, 6.448601113246611,
                                             6.871046498461405],
                                            [6.645699864830354, 7.0763810318208265,
                                             7.705525386444002, 8.289393915772498,
                                             8.887417828753165, 9.568721568476901,
                                             10.049054476408589],
                                            [8.49833240360389, 8.967094567122494,
                                             9.650190348133156, 10.281335243547463,
                                             10.925570469866079, 11.656888210347576,
                                             12.171551848370639]],
          ('cubic-pytorch', True, (3, 2)): [[0.4332160202777582, 1.2296853450455567],
                                            [3.5045209965482385, 5.009632473335059],
                                            [8.236189747420497, 10.198542239991406]],
          ('cubic-pytorch', False, (6, 7)): [[-0.14743381013277634, -0.09868749798989468,
                                              0.033753056166368145, 0.20946984653236853,
                                              0.41126752281216816, 0.7193768120447246,
                                              0.9372408810410826],
                                             [0.5008341659877218, 0.6609514237845221,
                                              0.9452642843387371, 1.216214733136475,
                                              1.50742826873425, 1.918353981185731,
                                              2.1991967791548963],
                                             [2.0453397495296315, 2.350973930872096,
                                              2.838144883899902, 3.242164145963097,
                                              3.659518365922618, 4.21797664148126,
                                              4.590051099982824],
                                             [3.7459149077233995, 4.108051889908335,
                                              4.681245915029581, 5.151098502344476,
                                              5.632678824955882, 6.269996683588737,
                                              6.692110104069987],
                                             [6.620231175824513, 7.0531600246008725,
                                              7.733443586701287, 8.284549646817212,
                                              8.845694185214398, 9.581148647028108,
                                              10.065721294688059],
                                             [8.560096885798492, 9.031818895026094,
                                              9.770958178015508, 10.366971502663812,
                                              10.972293836072431, 11.762588185314575,
                                              12.282193922655525]],
          ('cubic-pytorch', False, (3, 2)): [[0.29481476742378454, 1.1760834696222073],
                                             [3.2620667733169677, 5.036511568166966],
                                             [8.355732041835806, 10.662880084964364]],
          ('area', True, (6, 7)): [[0.0, 0.0857142857142857, 0.1950979178498911,
                                    0.4040610178208843, 0.6746581947306491, 0.9025273505177112,
                                    1.1428571428571428],
                                   [0.7985957062499247, 0.9921642163585012, 1.2019491446999226,
                                    1.524906164442737, 1.894899485498613, 2.192438689457549,
                                    2.4999999999999996],
                                   [1.5971914124998499, 1.8986141470027171, 2.2088003715499545,
                                    2.6457513110645903, 3.1151407762665775, 3.4823500283973874,
                                    3.857142857142857],
                                   [4.5175395145262565, 4.934119179574165, 5.357163147351161,
                                    5.938459911664722, 6.5445110201651575, 7.010940187793312,
                                    7.483314773547883],
                                   [6.408394771056788, 6.8697667381616885, 7.337050082754153,
                                    7.975858215510947, 8.637440154483846, 9.144623764739325,
                                    9.657305953007711],
                                   [8.299250027587322, 8.805414296749213, 9.316937018157148,
                                    10.013256519357174, 10.730369288802535, 11.278307341685341,
                                    11.831297132467542]],
          ('area', True, (3, 2)): [[0.6054292660006195, 1.4674092077419252],
                                   [3.543647626266966, 5.112215036382548],
                                   [8.004481471700053, 10.039128714660054]]}
ST_CUBIC = [[-0.09140888296269022, 0.2471852594719462, 0.7359941073236655, 0.0],
            [0.7094756213820743, 1.2768613827009352, 1.9272248682161448, 0.0],
            [2.5385120061082187, 3.46899118589001, 4.385392235388656, 0.0],
            [4.98428678534254, 6.120635487788602, 7.210693419166628, 0.0],
            [8.260248476051842, 9.589855638744869, 10.844309342296636, 0.0]]
ST_GRAD_SCALE = [-70.58194248302783, -27.12866057342149]

IMG = np.arange(20.0).reshape(4, 5) ** 1.5 / 7.0


@pytest.fixture
def x64():
    nx.config.update("jax_enable_x64", True)
    yield
    nx.config.update("jax_enable_x64", False)


def close(got, want, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


def fd_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        g[idx] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


# -- custom_gradient -------------------------------------------------------------------------------

def test_custom_gradient_uses_the_given_vjp(x64):
    @nx.custom_gradient
    def f(x):
        return x ** 2, lambda g: (g * nx.cos(x),)
    xs = nx.array([0.3, 1.2, -2.0])
    close(f(xs), np.array([0.3, 1.2, -2.0]) ** 2)
    close(nx.vmap(nx.grad(f))(xs), CG_GRAD)
    close(nx.vmap(nx.grad(nx.grad(f)))(xs), CG_GRAD2)
    close(nx.jit(nx.vmap(nx.grad(f)))(xs), CG_GRAD)
    close(nx.grad(lambda x: nx.jit(f)(x))(1.2), CG_GRAD[1])

    @nx.custom_gradient
    def h(x, y):
        return x * y, lambda g: (g * y * 2, g * x * 3)
    close(nx.grad(lambda a, b: h(a, b) ** 2, argnums=(0, 1))(2.0, 5.0), CG_TWO)

    @nx.custom_gradient
    def k(x):                       # one argument: a bare cotangent is accepted (JAX)
        return x ** 2, lambda g: g * 3
    close(nx.grad(k)(3.0), 3.0)


def test_custom_gradient_bad_input():
    with pytest.raises(TypeError, match="expected a function"):
        nx.custom_gradient(3)

    @nx.custom_gradient
    def bad(x):
        return x
    with pytest.raises(TypeError, match="pair"):
        bad(1.0)

    @nx.custom_gradient
    def wrong(x, y):
        return x * y, lambda g: (g,)
    with pytest.raises(TypeError, match="one cotangent per positional argument"):
        nx.grad(wrong)(1.0, 2.0)


# -- pure_callback / io_callback -------------------------------------------------------------------

def test_pure_callback_eager_and_under_jit_runs_at_run_time():
    calls = []

    def cb(a):
        calls.append(a.copy())
        return np.sin(a.astype(np.float64))        # cast back to the declared float32 (JAX)

    def f(x):
        return nx.pure_callback(cb, nx.ShapeDtypeStruct(x.shape, x.dtype), x) * 2
    x = nx.array([0.5, 1.0, 2.0])
    out = f(x)
    assert out.dtype == np.float32
    close(out, 2 * np.sin(np.float32([0.5, 1.0, 2.0])), rtol=1e-6)
    jf = nx.jit(f)
    close(jf(x), out)
    close(jf(x + 1), 2 * np.sin(np.float32([1.5, 2.0, 3.0])), rtol=1e-6)
    assert len(calls) == 3                         # once eagerly, once per compiled call
    assert isinstance(calls[0], np.ndarray)


def test_pure_callback_pytrees_and_kwargs():
    def cb(d, scale):
        return {"s": d["a"] + d["b"] * scale, "n": np.array(d["a"].size, np.int32)}
    spec = {"s": nx.ShapeDtypeStruct((2,), np.float32), "n": nx.ShapeDtypeStruct((), np.int32)}
    out = nx.jit(lambda a, b: nx.pure_callback(cb, spec, {"a": a, "b": b}, scale=3.0))(
        nx.ones(2), nx.ones(2))
    close(out["s"], [4.0, 4.0])
    assert int(out["n"]) == 2


@pytest.mark.parametrize("method, shapes", [
    ("sequential", [((3,), (3,)), ((3,), (3,))]),
    ("expand_dims", [((2, 3), (1, 3))]),
    ("broadcast_all", [((2, 3), (2, 3))]),
    ("legacy_vectorized", [((2, 3), (3,))]),
])
def test_pure_callback_vmap_methods(method, shapes):
    seen = []

    def cb(a, b):
        seen.append((a.shape, b.shape))
        return a + b
    f = nx.vmap(lambda x: nx.pure_callback(cb, nx.ShapeDtypeStruct((3,), x.dtype), x,
                                           nx.ones(3), vmap_method=method))
    xs = nx.arange(6.0).reshape(2, 3)
    close(f(xs), np.arange(6.0).reshape(2, 3) + 1)
    assert seen == shapes                          # JAX's calling conventions
    seen.clear()
    close(nx.jit(f)(xs), np.arange(6.0).reshape(2, 3) + 1)
    assert seen == shapes


def test_pure_callback_errors():
    spec = nx.ShapeDtypeStruct((3,), np.float32)
    f = lambda x: nx.pure_callback(np.sin, spec, x)          # noqa: E731
    with pytest.raises(NotImplementedError, match="vmap_method"):
        nx.vmap(f)(nx.ones((2, 3)))
    with pytest.raises(ValueError, match="do not support differentiation"):
        nx.grad(lambda x: f(x).sum())(nx.ones(3))
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        nx.pure_callback(lambda a: a[:2], spec, nx.ones(3))
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        nx.jit(lambda x: nx.pure_callback(lambda a: a[:2], spec, x))(nx.ones(3))
    with pytest.raises(ValueError, match="vmap_method must be"):
        nx.pure_callback(np.sin, spec, nx.ones(3), vmap_method="loop")
    with pytest.raises(TypeError, match="callable"):
        nx.pure_callback(3, spec, nx.ones(3))
    with pytest.raises(TypeError, match="shape and dtype"):
        nx.pure_callback(np.sin, (3,), nx.ones(3))
    with pytest.raises(TypeError, match="structure"):
        nx.pure_callback(lambda a: (a, a), spec, nx.ones(3))


def test_pure_callback_with_a_custom_jvp_is_differentiable(x64):
    @nx.custom_jvp
    def sin_cb(x):
        return nx.pure_callback(np.sin, nx.ShapeDtypeStruct(x.shape, x.dtype), x,
                                vmap_method="expand_dims")

    @sin_cb.defjvp
    def _(p, t):
        return sin_cb(p[0]), nx.cos(p[0]) * t[0]
    x = nx.array([0.1, 0.7])
    close(nx.grad(lambda v: sin_cb(v).sum())(x), np.cos([0.1, 0.7]))
    close(nx.vmap(nx.grad(lambda v: sin_cb(v)))(x), np.cos([0.1, 0.7]))


def test_io_callback_runs_every_call_in_order_even_unused():
    log = []
    spec = nx.ShapeDtypeStruct((), np.float32)

    def f(x):
        nx.experimental.io_callback(lambda a: (log.append(("unused", float(a))),
                                               np.float32(0))[1], spec, x)
        y = nx.experimental.io_callback(lambda a: (log.append(("used", float(a))), a * 2)[1],
                                        spec, x)
        return y + 1
    jf = nx.jit(f)
    close(jf(nx.float32(1.0)), 3.0)
    close(jf(nx.float32(2.0)), 5.0)
    assert log == [("unused", 1.0), ("used", 1.0), ("unused", 2.0), ("used", 2.0)]
    log.clear()
    nx.vmap(f)(nx.array([1.0, 2.0]))
    assert log == [("unused", 1.0), ("unused", 2.0), ("used", 1.0), ("used", 2.0)]


# -- vectorize / piecewise -------------------------------------------------------------------------

def test_vectorize_elementwise_matches_numpy():
    def f(a, b):
        return a * 2 + b
    a = np.arange(3.0)[:, None]
    b = np.arange(4.0)
    close(jnp.vectorize(f)(a, b), np.vectorize(f)(a, b))
    g = jnp.vectorize(lambda v, n: v ** n, excluded={1})
    close(g(np.arange(3.0), 2), np.arange(3.0) ** 2)
    close(jnp.vectorize(lambda v, n=1: v * n, excluded={"n"})(np.arange(3.0), n=4),
          np.arange(3.0) * 4)


def test_vectorize_signature_matches_numpy():
    rng = np.random.RandomState(0)
    m = rng.rand(5, 2, 3)
    v = rng.rand(1, 3)
    mv = jnp.vectorize(lambda mm, vv: (mm @ vv, vv.sum()), signature="(m,n),(n)->(m),()")
    a, b = mv(m, v)
    ra, rb = np.vectorize(lambda mm, vv: (mm @ vv, vv.sum()), signature="(m,n),(n)->(m),()")(
        m, v)
    close(a, ra)
    close(b, rb)
    dot = jnp.vectorize(lambda p, q: p @ q, signature="(n),(n)->()")
    close(dot(m, m[0, 0]), np.einsum("abn,n->ab", m, m[0, 0]))
    close(nx.jit(dot)(m, m[0, 0]), np.einsum("abn,n->ab", m, m[0, 0]), rtol=1e-6)
    # zero-size loop dimension
    assert dot(np.ones((0, 3)), np.ones(3)).shape == (0,)


def test_vectorize_grad_matches_finite_differences(x64):
    dot = jnp.vectorize(lambda p, q: nx.sin(p) @ q, signature="(n),(n)->()")
    x = np.random.RandomState(1).rand(2, 3)

    def loss(a):
        return (dot(a, a) ** 2).sum()
    close(nx.grad(loss)(x), fd_grad(lambda a: float(loss(nx.asarray(a))), x), rtol=1e-7,
          atol=1e-8)


def test_vectorize_errors():
    dot = jnp.vectorize(lambda p, q: p @ q, signature="(n),(n)->()")
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n'"):
        dot(np.ones((4, 3)), np.ones(2))
    with pytest.raises(ValueError, match="fewer than"):
        dot(np.ones(3), np.float32(1))
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        jnp.vectorize(lambda p: p, signature="(n->)")
    with pytest.raises(ValueError, match="do not broadcast"):
        jnp.vectorize(lambda p, q: p + q)(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="core dimensions"):
        jnp.vectorize(lambda p: p, signature="(n)->()")(np.ones((2, 3)))
    with pytest.raises(TypeError, match="callable"):
        jnp.vectorize(3)


def test_piecewise_matches_numpy(x64):
    x = np.linspace(-2, 2, 9)
    fs = [lambda v: -v, lambda v: v ** 2]
    close(jnp.piecewise(x, [x < 0, x >= 0], fs), np.piecewise(x, [x < 0, x >= 0], fs))
    close(jnp.piecewise(x, [x < 0], [lambda v: -v, 7.0]),
          np.piecewise(x, [x < 0], [lambda v: -v, 7.0]))
    # overlapping conditions: the last one wins; none: 0
    close(jnp.piecewise(x, [x < 1, x < 0], [1.0, 2.0]), np.piecewise(x, [x < 1, x < 0],
                                                                      [1.0, 2.0]))
    xi = np.arange(-3, 4)
    out = jnp.piecewise(xi, [xi < 0], [lambda v: v * 2.5])
    assert out.dtype == np.asarray(nx.asarray(xi)).dtype      # x's dtype (JAX)
    g = nx.grad(lambda v: jnp.piecewise(v, [v < 0, v >= 0], fs).sum())(x)
    close(g, np.where(x < 0, -1.0, 2 * x))
    with pytest.raises(ValueError, match="funclist has 3 entries"):
        jnp.piecewise(x, [x < 0], [1.0, 2.0, 3.0])


# -- image -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("key", list(RESIZE))
def test_resize_matches_jax(key, x64):
    method, antialias, shape = key
    out = nx.image.resize(IMG, shape, method, antialias=antialias)
    close(out, RESIZE[key], rtol=1e-12, atol=1e-12)
    assert out.shape == shape


def test_resize_float32_and_ints():
    out = nx.image.resize(IMG.astype(np.float32), (6, 7), "lanczos3")
    assert out.dtype == np.float32
    close(out, RESIZE[("lanczos3", True, (6, 7))], rtol=2e-5, atol=2e-5)
    assert nx.image.resize(np.arange(4), (2,), "linear").dtype == np.float32
    n = nx.image.resize(np.arange(12, dtype=np.int32).reshape(3, 4), (5, 2), "nearest")
    assert n.dtype == np.int32
    assert nx.image.resize(IMG, (4, 5), "cubic").shape == (4, 5)
    close(nx.image.resize(IMG, (4, 5), "cubic"), IMG.astype(np.float32), rtol=1e-6)


def test_scale_and_translate_matches_jax(x64):
    out = nx.image.scale_and_translate(IMG, (5, 4), (0, 1), nx.array([1.3, 0.7]),
                                       nx.array([0.25, -0.4]), "cubic")
    close(out, ST_CUBIC)
    g = nx.grad(lambda s: nx.image.scale_and_translate(IMG, (5, 4), (0, 1), s,
                                                       nx.array([0.25, -0.4]),
                                                       "linear").sum())(nx.array([1.3, 0.7]))
    close(g, ST_GRAD_SCALE, rtol=1e-10, atol=1e-10)


def test_resize_is_differentiable_batchable_and_jittable(x64):
    w = np.arange(18.0).reshape(6, 3)

    def loss(im):
        return (nx.image.resize(im, (6, 3), "cubic") * w).sum()
    close(nx.grad(loss)(IMG), RESIZE_GRAD_CUBIC)
    close(nx.grad(loss)(IMG), fd_grad(lambda a: float(loss(nx.asarray(a))), IMG), rtol=1e-7,
          atol=1e-7)
    batch = np.stack([IMG, 2 * IMG])
    out = nx.vmap(lambda im: nx.image.resize(im, (3, 2), "linear"))(batch)
    close(out[1], 2 * np.asarray(RESIZE[("linear", True, (3, 2))]))
    close(nx.jit(lambda im: nx.image.resize(im, (6, 7), "lanczos5"))(IMG),
          RESIZE[("lanczos5", True, (6, 7))])


def test_image_errors():
    with pytest.raises(ValueError, match="Unknown resize method"):
        nx.image.resize(IMG, (2, 2), "bogus")
    with pytest.raises(ValueError, match="length equal to the number of dimensions"):
        nx.image.resize(IMG, (2,), "linear")
    with pytest.raises(ValueError, match="non-negative"):
        nx.image.resize(IMG, (2, -1), "linear")
    with pytest.raises(ValueError, match="nearest"):
        nx.image.scale_and_translate(IMG, (4, 5), (0,), [1.0], [0.0], "nearest")
    with pytest.raises(ValueError, match="one entry per spatial dimension"):
        nx.image.scale_and_translate(IMG, (4, 5), (0, 1), [1.0], [0.0], "linear")
    with pytest.raises(ValueError, match="not in spatial_dims"):
        nx.image.scale_and_translate(IMG, (4, 6), (0,), [1.0], [0.0], "linear")
    with pytest.raises(TypeError, match="method"):
        nx.image.resize(IMG, (2, 2), 3)


# -- checkpoint policies, compile-time evaluation and the small names ------------------------------

def test_checkpoint_accepts_jax_keywords(x64):
    f = nx.checkpoint(lambda x: nx.sin(x) * x, policy=nx.checkpoint_policies.dots_saveable,
                      prevent_cse=False)
    close(nx.grad(f)(0.7), np.cos(0.7) * 0.7 + np.sin(0.7))
    g = nx.checkpoint(lambda x, n: x ** n, static_argnums=(1,))
    close(nx.grad(g)(2.0, 3), 12.0)
    policies = nx.checkpoint_policies
    for name in ("everything_saveable", "nothing_saveable", "dots_saveable",
                 "dots_with_no_batch_dims_saveable", "checkpoint_dots"):
        assert callable(getattr(policies, name))
    assert policies.save_only_these_names("a") is policies.nothing_saveable
    both = policies.save_from_both_policies(policies.nothing_saveable, policies.dots_saveable)
    assert both(nx.primitives.matmul_p) and not both(nx.primitives.add_p)
    assert nx.ad_checkpoint.checkpoint_name(3.0, "h") == 3.0
    with pytest.raises(TypeError, match="policy"):
        nx.checkpoint(lambda x: x, policy=3)


def test_ensure_compile_time_eval_under_jit():
    @nx.jit
    def f(x):
        with nx.ensure_compile_time_eval():
            n = int(nx.sum(nx.arange(4)))          # a Python int while tracing
            table = nx.arange(3.0) * 2
        return x * n + table
    close(f(1.0), 6.0 + np.arange(3.0) * 2)
    with pytest.raises(nx.errors.ConcretizationTypeError):   # without it: no int in a trace
        nx.jit(lambda x: x * int(nx.sum(x)))(nx.ones(2))
    with nx.ensure_compile_time_eval():
        close(nx.arange(2.0) + 1, [1.0, 2.0])      # eagerly: no effect


def test_small_names_exist_and_work():
    with nx.named_scope("block"):
        y = nx.ones(2) * 2
    close(y, [2.0, 2.0])
    p = nx.tree_util.Partial(lambda a, b: a * b, 3.0)
    close(nx.jit(lambda q, x: q(x))(p, nx.ones(2)), [3.0, 3.0])
    assert isinstance(nx.ones(2), nx.Array)
    from nx_rune.typing import ArrayLike, DTypeLike  # noqa: F401

    def annotated(x: nx.Array) -> nx.Array:
        return x + 1
    close(annotated(nx.zeros(1)), [1.0])


# -- frompyfunc (values: jax 0.10.2) ---------------------------------------------------------------

def test_frompyfunc_methods_match_jax():
    u = jnp.frompyfunc(lambda a, b: a * b + 1, 2, 1, identity=1)
    assert (u.nin, u.nout, u.identity) == (2, 1, 1)
    x = jnp.arange(1.0, 5.0)
    close(u(x, 2.0), [3.0, 5.0, 7.0, 9.0])
    close(u.reduce(x), 65.0)                      # from the identity, as JAX
    close(u.reduce(x, initial=3.0), 113.0)
    close(u.reduce(x.reshape(2, 2), axis=1), [5.0, 17.0])
    assert u.reduce(x.reshape(2, 2), axis=1, keepdims=True).shape == (2, 1)
    close(u.accumulate(x), [1.0, 3.0, 10.0, 41.0])
    close(u.outer(x[:2], x[:3]), [[2.0, 3.0, 4.0], [3.0, 5.0, 7.0]])
    close(u.reduceat(x, [0, 2]), [3.0, 13.0])
    close(u.at(x, nx.array([0, 0, 2]), 2.0, inplace=False), [7.0, 2.0, 7.0, 4.0])
    close(nx.jit(lambda v: u.reduce(v))(x), 65.0)
    close(nx.grad(lambda v: u.reduce(v))(x), [24.0, 24.0, 20.0, 16.0])
    two = jnp.frompyfunc(lambda a: (a + 1, a * 2), 1, 2)
    p, q = two(x)
    close(p, x + 1)
    close(q, 2 * x)


def test_frompyfunc_errors():
    with pytest.raises(ValueError, match="nin must be a positive int"):
        jnp.frompyfunc(lambda: 0, 0, 1)
    with pytest.raises(TypeError, match="callable"):
        jnp.frompyfunc(3, 1, 1)
    un = jnp.frompyfunc(lambda a: a, 1, 1)
    with pytest.raises(ValueError, match="binary"):
        un.reduce(nx.ones(3))
    u = jnp.frompyfunc(lambda a, b: a + b, 2, 1)
    with pytest.raises(NotImplementedError, match="inplace=False"):
        u.at(nx.ones(3), 0, 1.0)
    with pytest.raises(ValueError, match="zero-size"):
        u.reduce(nx.ones(0))
    with pytest.raises(TypeError, match="expected 2 arguments"):
        u(nx.ones(3))


def test_vectorize_passes_none_through():
    f = jnp.vectorize(lambda a, b: a * 2 if b is None else a + b)
    close(f(np.arange(3.0), None), np.arange(3.0) * 2)
    g = jnp.vectorize(lambda a, b: a.sum() if b is None else a @ b, signature="(n),()->()")
    close(g(np.ones((2, 3)), None), [3.0, 3.0])
    with pytest.raises(ValueError, match="cannot pass None"):
        jnp.vectorize(lambda a, b: a, signature="(n),(n)->(n)")(np.ones(3), None)
