"""Complex derivatives of det, slogdet, qr, cholesky (and the solves built on them) with JAX's
conventions: holomorphic functions (det) differentiate with ``holomorphic=True``; real-valued
functions of complex matrices get the conjugate of the Wirtinger gradient, as ``jax.grad``
returns it (``df/dx - i df/dy``).

Golden values: jax 0.10.2 in x64 mode (``jax.grad``, ``jax.jvp``, forward-over-reverse
Hessian-vector products, complex128) on the same functions, pinned as literals; each function
is also checked against central float64 finite differences in the real and imaginary
directions.  jit and vmap give the same values.
"""
import numpy as np
import pytest

import nx_rune as nx
from nx_rune.scipy import linalg as sl

la = nx.linalg

A = np.array([[2 + 1j, -1 + 0.5j, 0.3 - 0.2j], [0.4 + 0.1j, 1.5 - 1j, -0.7 + 0.6j],
              [-0.2 + 0.8j, 0.9 + 0.3j, 1.1 + 0.4j]])
E = np.array([[0.5 - 0.3j, 0.2 + 0.1j, -0.4 + 0.7j], [0.1 + 0.9j, -0.6 + 0.2j, 0.3 - 0.5j],
              [0.8 - 0.1j, 0.25 + 0.35j, -0.2 - 0.6j]])
T = np.array([[1 + 0.5j, -0.3 + 0.2j, 0.7 - 1j], [0.2 - 0.4j, 1.2 + 0.1j, -0.5 + 0.3j],
              [-0.6 + 0.9j, 0.4 - 0.2j, 1.0 + 0.6j], [0.3 + 0.3j, -0.8 - 0.5j, 0.2 + 0.1j]])
W4 = np.array([[0.3 + 0.7j, -0.2 + 0.1j, 0.5 - 0.4j], [0.6 - 0.2j, 0.1 + 0.8j, -0.3 + 0.2j],
               [-0.7 + 0.4j, 0.2 - 0.9j, 0.4 + 0.3j], [0.1 - 0.5j, 0.9 + 0.2j, -0.6 - 0.1j]])
H = A @ A.conj().T + 3 * np.eye(3)      # Hermitian positive definite
W = E[::-1].copy()

# jax 0.10.2 (x64) values, flattened (C order); the function each one comes from is in FUNCS
# and the tests below (e.g. 'chol_grad' = jax.grad(f_chol)(H), 'qr_jvp_q' = jax.jvp of
# jnp.linalg.qr at T along W4, '..._hvp' = jax.jvp(jax.grad(f), (x,), (E,))[1])
JAX = {
    'det_holo_grad': [(2.8600000000000003-0.8300000000000001j), (-0.74-0.95j),
        (-0.16999999999999998-1.1900000000000002j), (1.6300000000000001-0.24000000000000005j),
        (1.7000000000000002+1.62j), (-1.7-2.4j), (0.15-0.35j), (2.14-0.55j), (4.45-0.6j)],
    'det_jacfwd': [(2.8600000000000003-0.8300000000000001j), (-0.74-0.95j),
        (-0.16999999999999998-1.1900000000000002j), (1.6300000000000001-0.24000000000000005j),
        (1.7000000000000002+1.62j), (-1.7-2.4j), (0.15-0.34999999999999987j), (2.14-0.55j),
        (4.45-0.6j)],
    'det_hvp': [(-1.675-0.26499999999999996j), (0.11000000000000004+0.11999999999999988j),
        (-1.175+2.4750000000000005j), (-1.105-0.1250000000000001j), (1.13-0.8799999999999997j),
        (-1.56-0.18999999999999995j), (-0.2099999999999999-0.9299999999999998j),
        (-0.9500000000000002+0.6799999999999999j), (-0.4699999999999999-0.36j)],
    'absdet2_grad': [(40.34410000000001-20.744200000000003j),
        (-13.832780000000003-12.048040000000004j), (-6.009499999999999-17.297500000000003j),
        (23.672400000000003-8.3383j), (30.13908000000001+19.268440000000005j),
        (-32.412000000000006-30.931000000000004j), (1.2229000000000005-5.670299999999999j),
        (30.394580000000005-14.45956j), (64.78800000000001-21.938499999999998j)],
    'logabs_grad': [(0.3477134818363164-0.17878792710480376j),
        (-0.11922050801172318-0.10383837878904756j), (-0.05179404594712344-0.1490818719977316j),
        (0.20402518899720196-0.07186526222163231j), (0.2597595297984906+0.16606880217811654j),
        (-0.27934913341179224-0.2665848465247484j), (0.010539801778640041-0.04887058469655945j),
        (0.26196160630061055-0.12462253349117036j), (0.5583879938135009-0.18908123421432196j)],
    'sign_grad': [(-0.1301288693203543-0.2530795170094439j),
        (-0.07557764689534434+0.08677336416719905j), (-0.1085076366921274+0.0376977391357907j),
        (-0.05230635797253739-0.14849753888311695j), (0.12087139107640148-0.189063179238327j),
        (-0.19403091258992294+0.20332126148086332j), (-0.03556992931552939-0.007671281336077609j),
        (-0.09070517029674907-0.1906659369301807j), (-0.1376207421633321-0.40641669408929315j)],
    'slogdet_jvp': [(0.05574440031969708-0.2860296065820558j), (-0.20172362690187656+0j)],
    'logabs_hvp': [(-0.10026440990008781+0.07317952247815211j),
        (0.023399177832790625-0.04298745205715547j), (-0.05626306558984971+0.3032884295947842j),
        (-0.08343805963064616+0.05660186210009293j), (0.12752366420506656-0.03258574025682509j),
        (-0.18446947745532397-0.12048734415701097j), (-0.03405129375936165-0.12135886618695091j),
        (-0.01618504827530457+0.16268769019230808j), (0.09813168830695275+0.0899902257315988j)],
    'sign_hvp': [(0.029948195401159464+0.02763300334241222j),
        (-0.04482893622997276-0.0014839607734451407j), (0.20130428826446267+0.04770463860530402j),
        (0.03182550983850107+0.03412371125396714j), (-0.002061077607310058-0.12669051328314668j),
        (-0.122459254781501+0.17069248137628915j), (-0.09470268454431764+0.023409431284104835j),
        (0.10215915810760547-0.022380833410532673j), (0.04084139235194248-0.14424034616710904j)],
    'qr_grad_tall': [(-0.22354128819185515-0.7974156934075716j),
        (0.46629012247178214+0.32774270425389845j), (-0.32979569721993685+0.3193538230353735j),
        (-1.381993825747304+0.4591858141544958j), (-0.5949274481049143-0.6631712148426706j),
        (1.0844056224971586+0.7749367827319086j), (0.9826504686860611-1.0092885262115108j),
        (0.19460524859342532+0.2491893467570045j), (-0.6034654588687975-0.48962398188051504j),
        (0.09526649804358864+0.8748648516975077j), (-0.7271980938322311-0.1845539200879801j),
        (0.3381122920660533-0.2081141878425361j)],
    'qr_grad_sq': [(0.27685656421390137-0.16423925225275757j),
        (-0.026492001835355397+0.24976248161382653j), (-0.964999560458687-0.2960565676735995j),
        (0.4518282077044392-0.8718806558032066j), (-0.20946878633364488-0.1961169501629112j),
        (-0.351706417403533+0.38294437863695474j), (-0.4822909513831797+0.4459084028405289j),
        (0.09274414013642038-0.17950425047503965j), (0.519615645369511-0.27971070000011256j)],
    'qr_jvp_q': [(0.14300056575965073-0.2571875846871329j),
        (0.050282732349921574-0.1408066393500311j), (-0.47703378948822694+0.07715292413467173j),
        (-0.2941116113683561-0.009391081930484546j), (-0.26427197945117037-0.4282398922400888j),
        (-0.015687555813328452+0.40496029603352346j), (0.2249590989711519+0.05101064957695006j),
        (-0.1453536403982023+0.4797128710790018j), (0.2602275086880575+0.2699633246411265j),
        (0.03692402668122323+0.3954926094815413j), (-0.4316113048096322+0.0518773804043278j),
        (0.0158506400833413-0.19618260825523395j)],
    'qr_jvp_r': [(-0.9023976000474672+0j), (0.0317802749874809-0.16284989802181124j),
        (0.8159783029189859+0.6219884309504089j), 0j, (0.24176616484030822+0j),
        (0.01872546548713572-0.8263409609985853j), 0j, 0j, (-0.38341115727876424+0j)],
    'qr_hvp': [(-0.18984342147797306+0.4983572291658882j),
        (0.06283819868971698+0.1731412987364303j), (0.1691376586982011+0.032799042851348714j),
        (0.07859510682164199-0.23490812735099226j), (0.20670081333699247+0.017186787235466655j),
        (-0.48506237458299256+0.31742475552493715j), (-0.1381361026982581-0.3635981161551213j),
        (-0.09041406880365924+0.4368238299486106j), (-0.09001371831776327-0.3686872616358906j)],
    'chol_grad': [(0.12415597605360186+0j), (0.0003350185606669654-0.15220411312984708j),
        (0.08729612130365969+0.05999671220151448j), (0.0003350185606669654+0.15220411312984708j),
        (-0.11502009239135144+0j), (0.04356107614756183-0.007288611721436659j),
        (0.08729612130365969-0.05999671220151448j), (0.04356107614756183+0.007288611721436659j),
        (-0.08468387563434107+0j)],
    'chol_jvp': [(0.08162789355604241+0j), 0j, 0j, (0.06142107385059142+0.1298214196235651j),
        (-0.10361418292887116-1.734723475976807e-18j), 0j,
        (0.06617254825161477-0.14270087404392148j), (0.10256519811839539+0.1377185972278901j),
        (-0.04314384547866093+0j)],
    'chol_hvp': [(0.004797715796146301+0j), (-0.0005956042457909143+0.010070302454017632j),
        (-0.0008803506270560831-0.006406207222713551j),
        (-0.0005956042457909143-0.010070302454017632j), (-0.006735120751113819+0j),
        (0.005078510146777312+0.0043184428087684j), (-0.0008803506270560831+0.006406207222713551j),
        (0.005078510146777312-0.0043184428087684j), (-0.001546999978068045+0j)],
    'cho_solve_grad_sym': [(-0.0010767755275884591+0j),
        (-0.00020733924653739506-0.0005129142639458256j),
        (-8.821113220831962e-05+0.0012387206809085591j),
        (-0.00020733924653739506+0.0005129142639458256j), (-0.0074879337390223125+0j),
        (0.0046479968000654355+0.013941904828580811j),
        (-8.821113220831962e-05-0.0012387206809085591j),
        (0.0046479968000654355-0.013941904828580811j), (-0.012548009434752386+0j)],
    'trs2_grad': [(0.09215213924761372+0.06575222908478383j), 0j, 0j,
        (0.12277596855699051-0.1249814710836609j), (-0.3835438344922905-0.02671950935084011j), 0j,
        (0.06423357664233577+0.17664233576642338j), (0.2667265581134194-0.30957888826501967j),
        (-0.5281940351725635-0.005616134624605917j)],
    'trs2_jvp': [(0.2762660918718736+0.37560640396272216j),
        (-0.5311301229996208-0.029975420076098047j), (0.008408350619695484-0.28157199715885534j),
        (-0.024992709557273868-0.5800164314756706j), (0.5804680133204664+0.3851462549508018j),
        (-0.2566829730882567+0.22556612139934884j), (-0.17848580105493095+0.3266023762587244j),
        (-0.13905908679205062-0.4022590441685758j), (0.2298470882838723+0.021205178752197767j)],
    'trs2_hvp': [(-0.16791040088878775-0.004478909505886138j), 0j, 0j,
        (0.15815252447303108-0.008978855112026896j), (-0.4196023636309624-0.3368701489955754j), 0j,
        (-0.10106942298470886+0.0759058021205179j), (0.43867495899224485-0.04935062215455994j),
        (-0.7692975862340259-0.4145186924912645j)],
    'pinv_grad': [(-0.6231982074362683+0.5992339325291585j),
        (-0.021355202463897688-0.055168741910853664j), (0.3368117850073674+0.398280635927597j),
        (-1.2127904933998204-1.2349713417750554j), (0.021856400878132266+0.20840100256045518j),
        (-0.9557615876671877+2.016488535820842j), (-0.16046323550965647-0.37895687113400645j),
        (-0.27778917235272815+0.31886428351741614j), (-0.790350321760182-0.06509452801994065j),
        (-0.8871044112580657-2.0400383760251333j), (0.3716548706252941+1.0787944464391315j),
        (-2.1139381299142497+2.056169441229487j)],
    'pinv_jvp': [(-0.22845539743134718+0.18031288625362327j),
        (-1.2507008052551787-0.4888322804458938j), (-0.12677753156682947-0.4111147284606342j),
        (-0.6687159859798241+0.27140029764046325j), (0.05408995454265342-0.4187919895549574j),
        (-0.11532340141086994-0.20003527791924602j), (0.15126144707671452+0.1807380781491409j),
        (-0.2601053326839313+0.3110047872369115j), (0.42923655007721345+0.10133989825376422j),
        (0.02582171051438964+1.1131575212802338j), (-0.6223204451883986+0.3755410232714046j),
        (0.25235031043475264+0.2547974851156697j)],
    'lstsq_grad_a': [(1.100410410001318-0.47742245328268984j),
        (-0.17036793857348292-0.005511022866152682j), (-0.1360191441419222-0.12978629621217896j),
        (-0.7025129584323784-0.053103510098561665j), (0.7913778085579596-0.24496715929046065j),
        (0.01484293478430769+1.266090677537236j), (-0.2053835600326777+1.1153123918364876j),
        (-0.10785989634200242-0.06358687116714408j), (1.699926683345839-0.593208265375146j),
        (-0.5219627756758017+0.4412131224463006j), (0.1236222702076431+0.030927460426786235j),
        (0.7185526004776674+1.71175142826418j)],
    'lstsq_grad_b': [(0.062115891370690304-0.6825566270366915j),
        (0.7693230936911353+0.005888264370522894j), (-0.9766179889496043+0.3462106344593102j),
        (0.3306034612131426-0.9450196016317751j), (0.33055825866776917+0.01672855799179207j),
        (-0.3381945958729717+0.03129607269437196j), (-1.8817002376930656-0.1044862260611848j),
        (0.7076769471719668-1.5281827021792336j)],
    'lstsq_jvp': [(-0.7209238651459428+0.44958320050731326j),
        (-0.7578276741457657-0.9659580858441188j), (0.1514938987576005-0.08959004596406073j),
        (0.07617789312792678+0.10480069968185529j), (0.7339992427348365+0.3810954241242903j),
        (-0.5942465315388409+1.0696131999113954j)],
}


def det(a):
    return la.det(a)


def f_absdet2(a):
    return nx.abs(la.det(a)) ** 2


def f_logabs(a):
    return la.slogdet(a)[1]


def f_sign(a):
    return nx.real(la.slogdet(a)[0] * (0.3 - 0.8j))


def f_qr_tall(a):
    q, r = la.qr(a)
    return nx.sum(nx.real(q * W4)) + nx.sum(nx.imag(r * W))


def f_qr_sq(a):
    q, r = la.qr(a)
    return nx.sum(nx.real(q * W)) + nx.sum(nx.imag(r * E))


def f_chol(h):
    return nx.sum(nx.real(la.cholesky(h) * W))


def f_cho_solve(h):
    # JAX's cho_factor reads one triangle with a triangle-only derivative; nx_rune's derivative
    # is that of the Hermitian matrix the triangle stands for: they agree on Hermitian inputs
    # moved along Hermitian directions, hence the symmetrization in both
    hs = (h + nx.conj(h.T)) / 2
    x = sl.cho_solve(sl.cho_factor(hs, lower=True), W4[:3])
    return nx.sum(nx.real(x * W4[1:]))


def f_pinv(a):
    p = la.pinv(a)
    return nx.sum(nx.real(p * W4.T)) + nx.sum(nx.imag(p * W4.T[::-1]))


def f_lstsq(a, b=W4[:, :2]):
    x, _, _, sv = la.lstsq(a, b)
    return (nx.sum(nx.real(x * W4[:3, 1:])) + nx.sum(nx.imag(x * W4[1:, :2]))
            + nx.sum(sv * np.array([1.0, 0.5, 0.2])))


def f_trs2(a):
    return nx.sum(nx.real(sl.solve_triangular(a, W4[:3], trans=2, lower=True) * W4[1:]))


# (golden key, real-valued function, point)
REAL = [("absdet2_grad", f_absdet2, A), ("logabs_grad", f_logabs, A),
        ("sign_grad", f_sign, A), ("qr_grad_tall", f_qr_tall, T), ("qr_grad_sq", f_qr_sq, A),
        ("chol_grad", f_chol, H), ("cho_solve_grad_sym", f_cho_solve, H),
        ("trs2_grad", f_trs2, A), ("pinv_grad", f_pinv, T), ("lstsq_grad_a", f_lstsq, T)]
HVP = [("logabs_hvp", f_logabs, A), ("sign_hvp", f_sign, A), ("qr_hvp", f_qr_sq, A),
       ("chol_hvp", f_chol, H)]


def want(key, shape):
    return np.asarray(JAX[key]).reshape(shape)


def close(got, expected, tol=1e-10):
    got = np.asarray(got)
    assert got.shape == np.shape(expected), (got.shape, np.shape(expected))
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def fd_grad(f, x, h=1e-6):
    """df/dx - i df/dy of a real-valued f by central float64 differences (JAX's grad)."""
    out = np.zeros(x.shape, complex)
    for idx in np.ndindex(x.shape):
        e = np.zeros(x.shape, complex)
        e[idx] = h
        dx = (float(f(x + e)) - float(f(x - e))) / (2 * h)
        dy = (float(f(x + 1j * e)) - float(f(x - 1j * e))) / (2 * h)
        out[idx] = dx - 1j * dy
    return out


@pytest.mark.parametrize("key,f,x", REAL, ids=[r[0] for r in REAL])
def test_real_valued_grad_as_jax(key, f, x):
    close(nx.grad(f)(x), want(key, x.shape))
    close(fd_grad(f, x), want(key, x.shape), 1e-7)


@pytest.mark.parametrize("key,f,x", REAL, ids=[r[0] for r in REAL])
def test_real_valued_grad_jit_and_vmap(key, f, x):
    close(nx.jit(nx.grad(f))(x), want(key, x.shape))
    x2 = x + 0.05 * (1 - 0.5j) * np.ones_like(x)
    batched = nx.vmap(nx.grad(f))(np.stack([x, x2]))
    close(batched[0], want(key, x.shape))
    close(batched[1], nx.grad(f)(x2))
    close(batched[1], fd_grad(f, x2), 1e-7)


@pytest.mark.parametrize("key,f,x", HVP, ids=[r[0] for r in HVP])
def test_second_order_as_jax(key, f, x):
    close(nx.jvp(nx.grad(f), (x,), (E,))[1], want(key, x.shape))
    close(nx.jit(lambda p, t: nx.jvp(nx.grad(f), (p,), (t,))[1])(x, E), want(key, x.shape))
    # the golden value independently: central differences of the gradient along E
    h = 1e-5
    fd = (np.asarray(nx.grad(f)(x + h * E)) - np.asarray(nx.grad(f)(x - h * E))) / (2 * h)
    close(fd, want(key, x.shape), 1e-7)


def test_det_holomorphic_as_jax():
    close(nx.grad(det, holomorphic=True)(A), want("det_holo_grad", A.shape))
    close(nx.jacfwd(det, holomorphic=True)(A), want("det_jacfwd", A.shape))
    close(nx.jacrev(det, holomorphic=True)(A), want("det_jacfwd", A.shape))
    close(nx.jit(nx.grad(det, holomorphic=True))(A), want("det_holo_grad", A.shape))
    close(nx.jvp(nx.grad(det, holomorphic=True), (A,), (E,))[1], want("det_hvp", A.shape))
    hv = nx.vmap(lambda a, e: nx.jvp(nx.grad(det, holomorphic=True), (a,), (e,))[1])(
        np.stack([A, A]), np.stack([E, E]))
    close(hv[1], want("det_hvp", A.shape))
    # the complex derivative by finite differences: the real and imaginary directions agree
    # (Cauchy-Riemann) and give the cofactor matrix
    h = 1e-6
    for idx in np.ndindex(A.shape):
        e = np.zeros(A.shape, complex)
        e[idx] = h
        dx = (np.linalg.det(A + e) - np.linalg.det(A - e)) / (2 * h)
        dy = (np.linalg.det(A + 1j * e) - np.linalg.det(A - 1j * e)) / (2j * h)
        assert abs(dx - dy) < 1e-8
        assert abs(dx - want("det_holo_grad", A.shape)[idx]) < 1e-8


def _cofactors(a):
    n = a.shape[-1]
    return np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(a, i, 0), j, 1))
                      for j in range(n)] for i in range(n)])


def test_det_complex_singular_is_the_cofactor_matrix():
    s = A.copy()
    s[2] = s[0] * (0.5 - 1j) + s[1] * 0.25                     # rank 2
    for fn in (nx.grad(det, holomorphic=True), nx.jit(nx.grad(det, holomorphic=True))):
        close(fn(s), _cofactors(s), 1e-12)
    # rank 1: the cofactor matrix is 0, its derivative (det's second derivative) is not
    r1 = np.zeros((3, 3), complex)
    r1[0, 0] = 1 + 1j
    close(nx.grad(det, holomorphic=True)(r1), np.zeros((3, 3)))
    h = 1e-6
    fd = (_cofactors(r1 + h * E) - _cofactors(r1 - h * E)) / (2 * h)
    close(nx.jvp(nx.grad(det, holomorphic=True), (r1,), (E,))[1], fd, 1e-8)
    # a batch of regular, rank-2 and rank-1 matrices under vmap and jit, first and second order
    batch = np.stack([A, s, r1])
    g = nx.grad(det, holomorphic=True)

    def hvp(a, e):
        return nx.jvp(g, (a,), (e,))[1]
    grads = np.asarray(nx.jit(nx.vmap(g))(batch))
    hvps = np.asarray(nx.vmap(nx.jit(hvp))(batch, np.stack([E, E, E])))
    for k in range(3):
        close(grads[k], _cofactors(batch[k]), 1e-12)
        fd = (_cofactors(batch[k] + h * E) - _cofactors(batch[k] - h * E)) / (2 * h)
        close(hvps[k], fd, 1e-8)


def test_slogdet_jvp_as_jax():
    sign_dot, log_dot = nx.jvp(lambda a: tuple(la.slogdet(a)), (A,), (E,))[1]
    close(complex(np.asarray(sign_dot)), JAX["slogdet_jvp"][0])
    close(float(np.asarray(log_dot)), JAX["slogdet_jvp"][1].real)
    assert np.asarray(log_dot).dtype == np.float64


def test_qr_jvp_as_jax():
    dq, dr = nx.jvp(lambda a: tuple(la.qr(a)), (T,), (W4,))[1]
    close(dq, want("qr_jvp_q", (4, 3)))
    close(dr, want("qr_jvp_r", (3, 3)))


def test_qr_wide_complex_by_finite_differences():
    # JAX has no derivative of a wide QR; finite differences of the value instead
    a = T.T.copy()                                             # (3, 4)

    def f(x):
        q, r = la.qr(x)
        return nx.sum(nx.real(q * W)) + nx.sum(nx.imag(r * W4.T))
    close(nx.grad(f)(a), fd_grad(f, a), 1e-7)
    close(nx.vmap(nx.grad(f))(np.stack([a, a]))[1], fd_grad(f, a), 1e-7)
    dq, dr = nx.jvp(lambda x: tuple(la.qr(x)), (a,), (W4.T,))[1]
    h = 1e-6
    qp, rp = np.linalg.qr(a + h * W4.T)
    qm, rm = np.linalg.qr(a - h * W4.T)
    close(dq, (qp - qm) / (2 * h), 1e-7)
    close(dr, (rp - rm) / (2 * h), 1e-7)


def test_pinv_jvp_as_jax():
    close(nx.jvp(la.pinv, (T,), (W4,))[1], want("pinv_jvp", (3, 4)))
    close(nx.jit(lambda a, e: nx.jvp(la.pinv, (a,), (e,))[1])(T, W4), want("pinv_jvp", (3, 4)))


def test_lstsq_as_jax():
    b = W4[:, :2].copy()
    close(nx.grad(lambda y: f_lstsq(T, y))(b), want("lstsq_grad_b", (4, 2)))
    close(fd_grad(lambda y: f_lstsq(T, y), b), want("lstsq_grad_b", (4, 2)), 1e-7)
    close(nx.jvp(lambda a: la.lstsq(a, b)[0], (T,), (W4,))[1], want("lstsq_jvp", (3, 2)))
    # the singular values' tangent (real) by central differences
    ds = nx.jvp(lambda a: la.lstsq(a, b)[3], (T,), (W4,))[1]
    h = 1e-6
    fd = (np.linalg.svd(T + h * W4, compute_uv=False)
          - np.linalg.svd(T - h * W4, compute_uv=False)) / (2 * h)
    assert np.asarray(ds).dtype == np.float64
    close(ds, fd, 1e-7)


def test_cholesky_jvp_as_jax():
    close(nx.jvp(la.cholesky, (H,), (E,))[1], want("chol_jvp", (3, 3)))
    upper = nx.jvp(lambda h: la.cholesky(h, upper=True), (H,), (E,))[1]
    close(upper, want("chol_jvp", (3, 3)).conj().T)


def test_complex64_follows():
    g = nx.grad(f_chol)(H.astype(np.complex64))
    assert np.asarray(g).dtype == np.complex64
    close(g, want("chol_grad", (3, 3)), 1e-4)
    g = nx.grad(det, holomorphic=True)(A.astype(np.complex64))
    close(g, want("det_holo_grad", (3, 3)), 1e-4)
