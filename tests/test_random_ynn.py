"""nx.random where XLA:CPU hands a reduction to YNNPACK: ball, dirichlet and maxwell from 4,096
values (a vmap's whole batch counted), bit for bit with jax 0.10.2.

XLA:CPU (jax 0.10.2) gives YNNPACK every float32 and float64 reduction of 4,096 operand elements
or more (in a vmap, of the whole batch), fused with the elementwise operations of 4,096 elements
or more around it: the row sums of ball's powers, dirichlet's softmax (its max, its exp, the
log-gamma draws' last logs, its sum), maxwell's sum of squares and, from 4,096 of ball's points,
the exponential draw's log1p.  There exp, log and log1p are YNNPACK's own approximations and the
sums YNNPACK's order (nx_rune.random._ynn_math, the kernels' xla_math_ynn.h).  ball with d = 1
has no reduction, and XLA keeps its quotient g / (s + e) ** (1 / p).

The golden values come from jax 0.10.2 (CPU, the AMD EPYC these suites pin their values on: the
gamma draws take the processor's rsqrt estimate, see test_random_samplers.py): each sampler's
array by the sha256 of its bytes and its values at a few indices (the first, then the first
ones where nx's former values were an ulp off); YNNPACK's exp, log, log1p and sums through
fusions XLA hands to YNNPACK (``op(sum(x, axis=-1))`` of rows (v, 0), ``sum(x, axis=-1)``).
"""
import hashlib
import math

import numpy as np
import pytest

import nx_rune as nx
import nx_rune.random as nxr
from nx_rune import primitives as P
from nx_rune._kernels import threefry as K
from nx_rune.primitives import bind
from nx_rune.random import _ynn_math

NAN, INF = math.nan, math.inf

# (sampler, args, vmap (None: one key; n: jax.vmap over split(PRNGKey(7), n); (m, n): a vmap of
# a vmap over split(PRNGKey(7), m * n) reshaped), indices, values there, sha256 of the array):
# jax.random.<sampler>(key, *args, dtype=...) of jax 0.10.2, key PRNGKey(7) (args ("lin", lo,
# hi, n): np.linspace(lo, hi, n) in the dtype)
SAMPLERS = {
    False: [
        ('ball', (3, 2.0, (1400,)), None, [0, 27, 28, 29],
         [-0.3638841509819031, 0.43496042490005493, -0.3723461925983429, -0.7119505405426025],
         '859dffd6d69534d2cf2dd5e458712bd17425caa1c988a40bb4ac2a5e24c13d93'),
        ('ball', (3, 2.0, (4096,)), None, [0, 27, 28, 29],
         [-0.3638841509819031, 0.43496042490005493, -0.3723461925983429, -0.7119505405426025],
         '897b6aab0097382aa623d0e9eba308f29a275b549b05a5df5e7b9aff7985add5'),
        ('ball', (16, 0.7, (300,)), None, [0, 1, 2],
         [-0.03913256525993347, 0.024016689509153366, 0.016935868188738823],
         '2aed0f2fd3cbda68f21ca250bd9d4ffd2954c768981aceb6b62fdd88f6f3ee66'),
        ('ball', (1, 2.0, (300,)), None, [0, 4, 6, 8],
         [-0.39942431449890137, 0.3927917778491974, -0.039263781160116196, -0.28840532898902893],
         'd3726712f2e806da27ea775395a26b8448f56d10237165ea75c2f1cba10c7dca'),
        ('ball', (1, 1.5, (5000,)), None, [0, 2, 3],
         [-0.42311662435531616, 0.25131484866142273, -0.7359082698822021],
         '42d3cfd94e3bc7c98e64b0e8ea0335222ab4120ecb8508330e8f806d30978699'),
        ('dirichlet', (('lin', 0.3, 3.0, 8), (600,)), None, [0, 10, 12, 16],
         [3.9109426808181524e-08, 0.05883562192320824, 0.08659781515598297, 8.847927529131994e-05],
         '97353daaa761bd6d13b89347a0b7e5ac6d82f8ff229bd55f397f078d943bc12d'),
        ('dirichlet', (('lin', 0.05, 3.0, 8), (600,)), None, [0, 16, 17, 18],
         [0.0, 1.5141248691511937e-20, 0.03686833754181862, 0.00961289368569851],
         '3bf086b3449dd500a7c165d1a288f048157926afd127d1020e78b8f591c872d3'),
        ('dirichlet', (('lin', 0.3, 3.0, 4096),), None, [0, 1, 2],
         [8.296826420339798e-11, 2.308113471372053e-05, 1.0647770665173084e-08],
         '4bf584f32a44c1d3037a628f11594050882c156259008a78c7ef009658dc9670'),
        ('dirichlet', (('lin', 0.3, 3.0, 2), (4096,)), None, [0, 22, 24],
         [3.5598151271187817e-07, 0.49355676770210266, 0.41417697072029114],
         '2fed713cd83d681704db0e099ba1763875f2a0fbe2e7ed466dcd547ab4acf01a'),
        ('maxwell', ((1700,),), 3, [0],
         [1.2385956048965454],
         '560a309492c78ddf40c3eec3cce0454297a75f69e46abcd56e0061adf0f0a3cf'),
        ('maxwell', ((683,),), 2, [0, 3, 13],
         [1.2385956048965454, 2.4362049102783203, 2.12680983543396],
         'ee40d267e1eeb1c6d2e3f92b9d8923ff889a619a112d659b5b6c1654f452f1dd'),
        ('maxwell', ((682,),), 2, [0],
         [1.2385954856872559],
         '0b4a0ffc477f4524c68f97b838be33b9405c0dfa1d9022e70de8d4ea3caffd2b'),
        ('maxwell', ((342,),), (2, 2), [0, 3, 13],
         [1.2385956048965454, 2.4362049102783203, 2.12680983543396],
         'df6d9963447d502cdf4862fd6955f475b873b2d5cda249083eb4d4b4a5b7eb5c'),
        ('ball', (3, 2.0, (500,)), 3, [0, 78, 79, 80],
         [-0.4963032901287079, -0.4625853896141052, 0.22621451318264008, 0.4145277440547943],
         '5cf5fd07f42a27ef9070ac0526e64a371d40c117b615ffc74a2ae08f6b5fe492'),
        ('ball', (3, 2.0, (1400,)), 3, [0, 45, 46, 47],
         [-0.4963032901287079, 0.20841045677661896, 0.09371180832386017, 0.48546719551086426],
         '8d4f8f9706de10721f2e16178efabe80dddc9c454d25a2545514cfb189b0007b'),
        ('dirichlet', (('lin', 0.3, 3.0, 8), (256,)), 2, [0, 8, 9, 10],
         [5.688183955498971e-05, 0.0012290378799661994, 0.046522557735443115, 0.06755533069372177],
         'b8f87f5754a53e549039744a23c7e51969a6098fc533823c7b3d275594ad692a'),
        ('double_sided_maxwell', (0.5, 2.0, (700,)), 3, [0, 25, 31],
         [-2.309342861175537, 3.6570913791656494, -1.8064332008361816],
         'ef6abdf5d27a584f949004f8c116380d98350e2273b6dfb7eb347483d0b778b5'),
        ('dirichlet', (('lin', 0.3, 3.0, 40000),), None, [0, 66, 83, 85],
         [8.627189240772992e-12, 1.4709794413647614e-06, 1.297373637498822e-05,
          4.068274574819952e-05],
         'ea2bea21ab3287e8b13ee438c063a83330a2c9f78646cade6843c4cf48d9c8dd'),
    ],
    True: [
        ('ball', (3, 2.0, (1400,)), None, [0, 12, 13, 14],
         [-0.5059061961413781, 0.20393410186113928, -0.25783506862629196, 0.5889022251110907],
         '7516ea8dbd68e18d8fa69c33931360783e7fd295c63aa77803fbfcf69ffea79b'),
        ('ball', (3, 2.0, (4096,)), None, [0, 3, 4, 5],
         [-0.5059061961413781, -0.12689305623773486, 0.8368547437218178, -0.23653918939772625],
         '8fb2cbd9149428bf87cafbe065fa27e4777d70d56349835a86c3f239038f136b'),
        ('ball', (16, 0.7, (300,)), None, [0, 64, 65, 66],
         [-0.019038683186161153, -0.03699641515737851, 0.016572886610958164, 0.015668105251632595],
         'ab9c0b82fc890294c82d1fde29d5e5f0ae96b251d439de9dcdce26ef59c69806'),
        ('ball', (1, 2.0, (300,)), None, [0, 1, 7],
         [-0.8010521512543444, 0.18144569366920943, 0.9062266820637399],
         'f57e7ff3e0745a7b0c38dab038eb116954392a872b0c9006d4a5c4c1665f5da6'),
        ('ball', (1, 1.5, (5000,)), None, [0, 1, 2, 4],
         [-0.8005790564550835, 0.22974557712644775, 0.6901959628093859, 0.858001746189771],
         'fb1f1286d46e40ec18ceaff3184955baefc7574590fa6fb06930ab67ce2150f7'),
        ('dirichlet', (('lin', 0.3, 3.0, 8), (600,)), None, [0, 2, 6],
         [2.178272514213156e-07, 0.030028340310458704, 0.21145500448739565],
         '4d7dd406a749c12ce38cf4d47414374ef2818ab61b8a8206a4ec6d83734f763c'),
        ('dirichlet', (('lin', 0.05, 3.0, 8), (600,)), None, [0, 12, 19, 24],
         [3.6707248544250397e-38, 0.2637845481733232, 0.2087490489363952, 4.765207030729545e-09],
         '28fa05fe6e972a9d9c5d79909904013ec5a26cfd7dc0a26b568751aa4f07ef40'),
        ('dirichlet', (('lin', 0.3, 3.0, 4096),), None, [0, 5, 11, 26],
         [3.1046837150580444e-10, 0.00014614339321646568, 6.828965458147902e-06,
          9.356613222707604e-07],
         '0b9babde4562c3aa175251000aa271c51b93188ce471b8855cd455154ec06e5b'),
        ('dirichlet', (('lin', 0.3, 3.0, 2), (4096,)), None, [0, 8, 20],
         [1.4728226705748099e-06, 0.010964351755781409, 0.04265310820630472],
         'bba66e0a08fa778664de19585a775d493c4d69d816b46afa814d25d244308a71'),
        ('maxwell', ((1700,),), 3, [0],
         [1.2074504775210062],
         'c16092a399b15a9db13f1dc59251c39eebd54ca2eb0a56f66f9715c8e3909328'),
        ('maxwell', ((683,),), 2, [0, 1, 9, 26],
         [1.2074504775210062, 1.4513157250041928, 0.7994591220278281, 2.4496451005960913],
         '503a37a5b37a3751229770cb8ab6393158942d055b64885ec893312446cce29b'),
        ('maxwell', ((682,),), 2, [0],
         [1.2074504775210062],
         'd0b59017a95278ec6f5c252755785b097650198604a13990421dde5a9741a228'),
        ('maxwell', ((342,),), (2, 2), [0, 1, 9, 26],
         [1.2074504775210062, 1.4513157250041928, 0.7994591220278281, 2.4496451005960913],
         '5896b58a8423ae632b1443dfb737314f160bb90215564d3dcfbb5aac202f0d56'),
        ('ball', (3, 2.0, (500,)), 3, [0, 3, 4, 5],
         [0.23437073941041373, 0.19703639793343414, 0.06490923614413717, 0.8922614655428462],
         '923ff0bca424ef5018c8c46e784a8586bcacbc3b69f0082f6f652d177a977a45'),
        ('ball', (3, 2.0, (1400,)), 3, [0, 3, 4, 5],
         [0.23437073941041373, 0.19703639793343414, 0.06490923614413717, 0.8922614655428462],
         '258b29de7f9458ca6fab3d0baf8a542d66926ec4d5a3adc77b787baf7779e6f4'),
        ('dirichlet', (('lin', 0.3, 3.0, 8), (256,)), 2, [0, 1, 2, 8],
         [0.00746220110989752, 0.10342250004670056, 0.10357333108511567, 0.0035637809507897142],
         'c0451403174be2180d52d706c314add7b0d1fe2eb2902a8005826fac5be8d429'),
        ('double_sided_maxwell', (0.5, 2.0, (700,)), 3, [0, 2, 33, 34],
         [-1.4828400503135666, 3.2223511940792253, -2.3255297259442624, 5.595073486192156],
         '4202432e62fd8e44821f08233fd35621de9bccb4ecc4165ca3f9d4dec31b509b'),
    ],
}

GRID = {
    False: {
        'ynn_exp': ('d51a92496223a838b3d1038fe40a8e33d6dfd57028f1481c7a4b70a2190561c2',
            [1.0, 0.997004508972168, 2.862518609581133e-20, 0.0]),
        'ynn_log': ('c6e01856aeafa60413dea609205c15850d2dd4fc6b5b6d1f3eee10c726dc1878',
            [-69.07755279541016, -69.07294464111328, 0.0, 69.07755279541016]),
        'ynn_log1p': ('6e8820cdc9c3a22e161e082ea06dcafc7768e21acea40c09c2ed122823cb268a',
            [-6.907768249511719, -6.5954179763793945, 1.7048389911651611, 2.397895336151123]),
    },
    True: {
        'ynn_exp': ('7cc98a11eb68b48a46facfbfcaf25bf059a66a4f00343e5414be0374dc73f2ad',
            [1.0, 0.9762857097579093, 4.508027065606742e-157, 0.0]),
        'ynn_log': ('8b190822c3f43ef42e511181b748091d6d64a0b5debe00dc0f194af17b79b890',
            [-69.07755278982137, -69.07294761963539, 0.0, 69.07755278982137]),
        'ynn_log1p': ('508ec0fc37aec53ad8ca61e43afe415522a34b7d8faa8fbfc69cd5e44a738f20',
            [-6.907755278982136, -6.59540498448135, 1.7048389971973534, 2.3978952727983707]),
    },
}

EDGE = {
    False: {
        'ynn_exp': (
            [NAN, -INF, INF, -88.0999984741211, -87.4000015258789, -87.30000305175781, -745.0,
              -708.5, 0.0, 1.5, 88.69999694824219, 88.80000305175781, 709.0, 710.0],
            [NAN, 0.0, INF, 0.0, 0.0, 1.2192433092680476e-38, 0.0, 0.0, 1.0, 4.481688976287842,
              INF, INF, INF, INF]),
        'ynn_log': (
            [NAN, INF, 0.0, -1.0, 9.99994610111476e-41, 0.0, 1.401298464324817e-45, 1.0, 2.0,
              1.4142135381698608, 1.4142136573791504, 3.0000000054977558e+38],
            [NAN, INF, -INF, NAN, -INF, -INF, -INF, 0.0, 0.6931471824645996, 0.3465735614299774,
              0.34657368063926697, 88.59684753417969]),
        'ynn_log1p': (
            [NAN, INF, -1.0, -2.0, 0.0, 9.99999993922529e-09, -9.99999993922529e-09,
              0.41421350836753845, 0.4142136871814728, -0.28999999165534973, -0.2928999960422516,
              1.0000000150474662e+30],
            [NAN, INF, -INF, NAN, 0.0, 9.99999993922529e-09, -9.99999993922529e-09,
              0.34657353162765503, 0.34657368063926697, -0.3424902856349945, -0.34658315777778625,
              69.07755279541016]),
    },
    True: {
        'ynn_exp': (
            [NAN, -INF, INF, -88.1, -87.4, -87.3, -745.0, -708.5, 0.0, 1.5, 88.7, 88.8, 709.0,
              710.0],
            [NAN, 0.0, INF, 5.478430346270467e-39, 1.1032203942490448e-38, 1.2192470959520051e-38,
              0.0, 0.0, 1.0, 4.4816890703380645, 3.325986980250579e+38, 3.6757840844711625e+38,
              8.218407461554972e+307, INF]),
        'ynn_log': (
            [NAN, INF, 0.0, -1.0, 1e-40, 1e-310, 1e-45, 1.0, 2.0, 1.4142135, 1.4142137, 3e+38],
            [NAN, INF, -INF, NAN, -92.10340371976183, -INF, -103.61632918473205, 0.0,
              0.6931471805599453, 0.3465735461755332, 0.3465736875968856, 88.59684582244185]),
        'ynn_log1p': (
            [NAN, INF, -1.0, -2.0, 0.0, 1e-08, -1e-08, 0.4142135, 0.4142137, -0.29, -0.2929,
              1e+30],
            [NAN, INF, -INF, NAN, 0.0, 9.999999950000001e-09, -1.0000000050000001e-08,
              0.3465735461755332, 0.3465736875968856, -0.3424903089467759, -0.3465831803719418,
              69.07755278982137]),
    },
}

SUMS = {
    False: {
        3: (1366, '670b6783aa49c4a30cdf8c3761f544467e9dc8d23736d5ec7ebf505eb27428ad',
               3.1077098846435547),
        17: (241, 'ea6b3289535e9ccab944575e1068248452098c1580b11f39dc17c384d9fd8eb9',
               32.349822998046875),
        100: (41, 'f2860f08b75411b0213993fa45091b45bc75fc21d3d9c4f63aee775a3fb222d3',
               191.4527587890625),
        1025: (4, 'b4859a0bd0cfa5598ebf91160592d2aaaa68406a334f4d4f45a719200410b9a0',
               1957.7052001953125),
        5000: (1, '66f2012f52cc184f3ae27b033db0ca62b07d71d91cf1ff1adb63c189e8fea7ae',
               9550.3291015625),
        40000: (1, '8d7a21a6bc323668425d45579653cc93a5f36d42e801601786a07de2ddb7e9c0',
               76394.703125),
    },
    True: {
        3: (1366, 'fc350a5359faf2d206b465f1dc16573376c4b840c4feff54542bc170e15519ad',
               3.1077100307793213),
        17: (241, 'bab98c554d3da972376a597527764112c52a5bc2fdc2ed476a552fb859e2b784',
               32.349820794797765),
        100: (41, '40a3ded0733b7957168f764237409a3fbb44347a17528299e5fcc33f7a91427f',
               191.45275061228475),
        1025: (4, '0770a33f01fc60785f5f61e3f9262e1a703f2382e3ab575d73e7e5e48cf4114f',
               1957.7052405788615),
        5000: (1, '76985374622ca7bb47b70733643d9763cf7848fce4d37d01ec7758ba85b36130',
               9550.32907909718),
        40000: (1, '9fd40df1a56483c0686669a9940eb421881e166539ac5d76e75c2cedc0786614',
               76394.70349645922),
    },
}

# jax.grad of dirichlet's first coordinates' sum in alpha (see test_dirichlet_gradient_at_ynn_sizes)
JAX_DIRICHLET_GRAD = [40.66817855834961, -0.9503729939460754, -0.8753810524940491,
                      -0.9508858919143677, -0.9230732321739197, -0.9186677932739258,
                      -0.8976045846939087, -0.9911915063858032]


def _args(args, dt):
    return [np.linspace(*a[1:]).astype(dt) if isinstance(a, tuple) and a and a[0] == "lin"
            else a for a in args]


def _keys(vmap):
    """PRNGKey(7), or split(PRNGKey(7), n) (reshaped (m, n, 2) for a vmap of a vmap)."""
    key = nxr.PRNGKey(7)
    if vmap is None:
        return key
    n = vmap if isinstance(vmap, int) else vmap[0] * vmap[1]
    keys = nxr.split(key, n)
    return keys if isinstance(vmap, int) else nx.reshape(keys, (vmap[0], vmap[1], 2))


def _mapped(fn, vmap):
    if vmap is None:
        return fn
    return nx.vmap(fn) if isinstance(vmap, int) else nx.vmap(nx.vmap(fn))


def _check(got, idx, vals, sha, dt, how):
    assert got.dtype == dt, how
    np.testing.assert_array_equal(got.reshape(-1)[idx], np.array(vals, dt), err_msg=how)
    assert hashlib.sha256(got.tobytes()).hexdigest() == sha, how


@pytest.mark.parametrize("x64, i", [(x64, i) for x64 in (False, True)
                                    for i in range(len(SAMPLERS[x64]))],
                         ids=[f"{'x64' if x64 else 'x32'}-{r[0]}-{r[1]}-vmap{r[2]}"
                              .replace(" ", "")
                              for x64 in (False, True) for r in SAMPLERS[x64]])
def test_samplers_are_jaxs_eager_jit_vmap(x64, i):
    name, args, vmap, idx, vals, sha = SAMPLERS[x64][i]
    dt = np.dtype(np.float64 if x64 else np.float32)
    with nx.enable_x64(x64):
        fn = lambda k: getattr(nxr, name)(k, *_args(args, dt), dtype=dt)     # noqa: E731
        keys = _keys(vmap)
        draw = _mapped(fn, vmap)
        outs = {"eager": np.asarray(draw(keys)), "jit": np.asarray(nx.jit(draw)(keys))}
        if vmap is None:
            # a vmap of one example reduces what one call does
            outs["vmap"] = np.asarray(nx.vmap(fn)(keys[None]))[0]
    for how, got in outs.items():
        _check(got, idx, vals, sha, dt, how)


def test_the_vmap_batch_counts():
    # 2 x 683 maxwell draws reduce 4,098 squares: YNNPACK's order, though one draw of 683 does
    # not; the count is set for the sampler's call only
    keys = nxr.split(nxr.PRNGKey(7), 2)
    assert _ynn_math.examples() == 1
    one = np.stack([np.asarray(nxr.maxwell(k, (683,))) for k in keys])
    both = np.asarray(nx.vmap(lambda k: nxr.maxwell(k, (683,)))(keys))
    assert np.any(one != both)
    assert _ynn_math.examples() == 1
    seen = []

    def probe(k):
        seen.append(_ynn_math.examples())
        return nxr.maxwell(k, (3,))
    nx.vmap(nx.vmap(probe))(nx.reshape(nxr.split(nxr.PRNGKey(0), 6), (2, 3, 2)))
    assert set(seen) == {1}                # (outside a sampler's call: no count)
    assert _ynn_math.offloaded(4096) and not _ynn_math.offloaded(4095)
    with _ynn_math.vmap_examples(2):
        assert _ynn_math.examples() == 2 and _ynn_math.offloaded(2048)
        with _ynn_math.vmap_examples(5):   # an enclosing call's count stands
            assert _ynn_math.examples() == 2


def test_vmap_of_jit_counts_the_batch_too():
    # jit traces one example; a function that chose by the batch size (here: 1,000 maxwell
    # draws, 3,000 squares, under the 4,096 rule alone, over it with the 3 examples) is traced
    # again under the vmap, which gives JAX's vmap(jit(f)) (jax 0.10.2's values; before: 463
    # elements an ulp off)
    keys = nxr.split(nxr.PRNGKey(7), 3)
    want_head = np.array([
        0x3f9e8a4d, 0x40257181, 0x3fb0a97c, 0x401beac8, 0x3f89e542, 0x3f550c96, 0x401a9693,
        0x4013f98a, 0x4005308b, 0x400eb21a, 0x3ff2e86f, 0x40055a3c], np.uint32).view(np.float32)
    draw = lambda k: nxr.maxwell(k, (1000,))            # noqa: E731
    for f in (nx.vmap(nx.jit(draw)), nx.jit(nx.vmap(nx.jit(draw))), nx.vmap(draw)):
        got = np.asarray(f(keys))
        np.testing.assert_array_equal(got[:, :4].ravel(), want_head)
        assert hashlib.sha256(got.tobytes()).hexdigest() == \
            "d969591a68c822bfa44eb67c2fb211fe6f3359c15f9a261dcffafb8565c7ae0f"
    # only such a function is traced again; any other jitted program is batched as it is
    calls = []

    def plain(x):
        calls.append(1)
        return nx.sum(x * 2.0)
    nx.vmap(nx.jit(plain))(nx.ones((3, 4)))
    assert len(calls) == 1
    calls.clear()

    def sampling(k):
        calls.append(1)
        return nxr.maxwell(k, (1000,))
    nx.vmap(nx.jit(sampling))(keys)
    assert len(calls) == 2


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("op", ["ynn_exp", "ynn_log", "ynn_log1p"])
def test_ynn_math_is_ynnpacks(op, x64):
    dt = np.dtype(np.float64 if x64 else np.float32)
    grid = {"ynn_exp": -np.linspace(0, 720 if x64 else 90, 30001),
            "ynn_log": np.geomspace(1e-30, 1e30, 30001),
            "ynn_log1p": np.linspace(-0.999, 10, 30001)}[op].astype(dt)
    sha, vals = GRID[x64][op]
    got = K.xla_math(op, grid)
    np.testing.assert_array_equal(got[[0, 1, 15000, 30000]], np.array(vals, dt))
    assert hashlib.sha256(got.tobytes()).hexdigest() == sha
    x, want = (np.array(v, dt) for v in EDGE[x64][op])
    np.testing.assert_array_equal(K.xla_math(op, x), want)
    # the primitive (eager and jit) and the module's function: the same values
    fn = getattr(_ynn_math, op)
    np.testing.assert_array_equal(np.asarray(fn(nx.asarray(grid))), got)
    np.testing.assert_array_equal(np.asarray(nx.jit(fn)(nx.asarray(grid))), got)
    np.testing.assert_array_equal(np.asarray(bind(P.xla_math_p, nx.asarray(grid), op=op)), got)


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
def test_ynn_row_sum_is_ynnpacks(x64):
    dt = np.dtype(np.float64 if x64 else np.float32)
    for k, (rows, sha, first) in SUMS[x64].items():
        x = (np.abs(np.sin(np.arange(rows * k) * 0.37)) * 3.0).astype(dt).reshape(rows, k)
        got = K.ynn_row_sum(x)
        assert got.dtype == dt and got.shape == (rows,)
        assert got[0] == dt.type(first) and hashlib.sha256(got.tobytes()).hexdigest() == sha, k
        # nx operations (traced) sum in the same order
        traced = np.asarray(nx.jit(_ynn_math.ynn_row_sum)(nx.asarray(x)))
        np.testing.assert_array_equal(traced, got, err_msg=str(k))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_ynn_row_sum_traced_equals_kernel_over_sizes(dt):
    # every branch of the kernel's clock (unrolled groups, Kahan steps, tail blocks, the
    # remainder, several tiles) against its nx-operation twin, on values of mixed magnitudes
    rng = np.random.default_rng(3)
    for k in (1, 2, 3, 8, 9, 15, 16, 17, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 1023,
              1024, 1025, 2047, 2049, 4095, 4097, 8191, 16384, 16385, 32767, 32768, 32769,
              70001):
        x = (rng.standard_normal((2, k)) * np.exp(rng.standard_normal((2, k)) * 3)).astype(dt)
        got = K.ynn_row_sum(x)
        np.testing.assert_array_equal(np.asarray(_ynn_math._row_sum_ops(nx.asarray(x))), got,
                                      err_msg=str(k))
        zeros = np.full((1, k), -0.0, dt)          # a sum of -0s: +0, as the kernel's
        assert not np.signbit(K.ynn_row_sum(zeros)).any()
        assert not np.signbit(np.asarray(_ynn_math._row_sum_ops(nx.asarray(zeros)))).any()
        np.testing.assert_allclose(got, x.astype(np.float64).sum(-1),
                                   rtol=1e-5 if dt == np.float32 else 1e-12,
                                   atol=1e-5 * np.abs(x).sum(-1).max())


def test_ynn_derivatives():
    x = np.linspace(0.25, 3.0, 12)
    for op, d in (("ynn_exp", np.exp(x)), ("ynn_log", 1 / x), ("ynn_log1p", 1 / (1 + x))):
        fn = getattr(_ynn_math, op)
        g = nx.grad(lambda v: nx.sum(fn(v)))(nx.asarray(x))
        np.testing.assert_allclose(np.asarray(g), d, rtol=1e-13, err_msg=op)
    w = np.linspace(-1.0, 1.0, 5000)
    g = nx.grad(lambda v: nx.sum(_ynn_math.ynn_row_sum(v * v)))(nx.asarray(w))
    np.testing.assert_allclose(np.asarray(g), 2 * w, rtol=1e-15)


def test_dirichlet_gradient_at_ynn_sizes():
    # jax.grad(lambda a: jax.random.dirichlet(PRNGKey(7), a, (600,))[:, 0].sum())(a) at
    # a = linspace(0.3, 3, 8), float32 (jax 0.10.2): the implicit gradient through YNNPACK's
    # logs, exp and sum
    a = np.linspace(0.3, 3.0, 8).astype(np.float32)
    g = nx.grad(lambda v: nx.sum(nxr.dirichlet(nxr.PRNGKey(7), v, (600,))[:, 0]))(a)
    np.testing.assert_allclose(np.asarray(g), JAX_DIRICHLET_GRAD, rtol=2e-5)


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="x must be a float32 or float64"):
        K.ynn_row_sum(np.ones(3, np.int32))
    with pytest.raises(TypeError, match="x must be a float32 or float64"):
        K.ynn_row_sum([1.0, 2.0])
    with pytest.raises(ValueError, match="at least one axis"):
        K.ynn_row_sum(np.array(1.0, np.float32))
    with pytest.raises(ValueError, match="op must be one of"):
        K.xla_math("ynn_tan", np.ones(3, np.float32))
    with pytest.raises(ValueError, match="op must be one of"):
        bind(P.xla_math_p, nx.ones(3), op="ynn_tan")
    assert K.ynn_row_sum(np.ones((0, 5), np.float32)).shape == (0,)
    assert K.ynn_row_sum(np.ones((2, 0), np.float64)).tolist() == [0.0, 0.0]
