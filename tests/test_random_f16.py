"""float16 draws of nx.random as JAX 0.10.2 computes them on CPU, bit for bit.

The golden values come from jax 0.10.2 (CPU, an AMD EPYC with AVX-512 but no float16
arithmetic), ``jax.random.<name>(PRNGKey(11), ...)`` with the arguments of ``_samplers``, in x32
mode (and x64 mode, where the weak types of Python scalars change the values), stored as the
bit patterns in hex.  XLA:CPU computes float16 by widening every operation to
float32 and rounding its result back: arithmetic rounds once per operation (no fused
multiply-adds), its log, exp, tan and pow call the C library's logf, expf, tanf and powf, and
log1p, erf and rsqrt are its float32 approximations; JAX sums float16 in float32.  The CRC-32s
pin JAX's results over every finite float16 argument (rsqrt's estimate is the processor's, as
in tests/test_random_samplers.py).
"""
import zlib

import numpy as np
import pytest

import nx_rune as nx
from nx_rune import primitives as P
from nx_rune import random as nxr
from nx_rune.backend.random import _xla_math

N = 48
F16 = np.float16


def _samplers(x64):
    lin = np.linspace(0.05, 30, N).astype(F16)
    if x64:
        return {
            "gamma_a07": lambda k: nxr.gamma(k, 0.7, (N,), F16),
            "generalized_normal": lambda k: nxr.generalized_normal(k, 0.7, (N,), F16),
            "weibull_min": lambda k: nxr.weibull_min(k, 1.5, 0.7, (N,), F16),
            "weibull_min_f32": lambda k: nxr.weibull_min(k, 1.5, 0.7, (N,), np.float32),
            "t": lambda k: nxr.t(k, 4.0, (N,), F16),
            "lognormal": lambda k: nxr.lognormal(k, 0.8, (N,), F16),
            "lognormal_f64": lambda k: nxr.lognormal(k, 0.8, (24,), np.float64),
            "ball_p07_f32": lambda k: nxr.ball(k, 3, 0.7, (8,), np.float32),
        }
    return {
        "gamma_a2": lambda k: nxr.gamma(k, 2.0, (N,), F16),
        "gamma_a05": lambda k: nxr.gamma(k, 0.5, (N,), F16),
        "gamma_a001": lambda k: nxr.gamma(k, 0.01, (N,), F16),     # float16 denormals
        "gamma_avec": lambda k: nxr.gamma(k, lin, dtype=F16),
        "loggamma": lambda k: nxr.loggamma(k, 0.3, (N,), F16),
        "beta": lambda k: nxr.beta(k, 0.7, 2.5, (N,), F16),
        "chisquare": lambda k: nxr.chisquare(k, 3.0, (N,), F16),
        "f": lambda k: nxr.f(k, 3.0, 5.0, (N,), F16),
        "t": lambda k: nxr.t(k, 4.0, (N,), F16),
        "generalized_normal": lambda k: nxr.generalized_normal(k, 0.7, (N,), F16),
        "weibull_min": lambda k: nxr.weibull_min(k, 1.5, 0.7, (N,), F16),
        "logistic": lambda k: nxr.logistic(k, (N,), F16),
        "gumbel": lambda k: nxr.gumbel(k, (N,), F16),
        "maxwell": lambda k: nxr.maxwell(k, (N,), F16),
        "double_sided_maxwell": lambda k: nxr.double_sided_maxwell(k, 0.5, 1.5, (N,), F16),
        "exponential": lambda k: nxr.exponential(k, (N,), F16),
        "pareto": lambda k: nxr.pareto(k, 2.0, (N,), F16),
        "cauchy": lambda k: nxr.cauchy(k, (N,), F16),
        # XLA folds a broadcast sigma into the normal's factor sqrt(2): every float dtype
        "lognormal": lambda k: nxr.lognormal(k, 0.8, (N,), F16),
        "lognormal_f32": lambda k: nxr.lognormal(k, 0.8, (N,), np.float32),
        "lognormal_f32_rows": lambda k: nxr.lognormal(
            k, np.array([0.3, 0.7, 1.9], np.float32), (8, 3), np.float32),
        "dirichlet": lambda k: nxr.dirichlet(k, np.array([0.5, 1.5, 3.0], F16), (16,), F16),
        "dirichlet_wide": lambda k: nxr.dirichlet(k, np.full((40,), 0.1, F16), (2,), F16),
        "ball": lambda k: nxr.ball(k, 3, 2.0, (16,), F16),
        "ball_p07": lambda k: nxr.ball(k, 3, 0.7, (16,), F16),
    }


# jax 0.10.2: (dtype, shape, the values' bits in hex); lognormal also float32/float64
GOLDEN = {False: {
    'gamma_a2': ('float16', (48,),
        'e54549357b362038b53e9736bf3e233ce43c3740cc40233c8f3e303cbd3a7244f343963fdb44a640'
        '0044d43c16353c3fe14363408e3da742ba3c6c43fa3f5a34e73e643dd83e553f7b3ef53f35412d47'
        'a03b0f401d39ff401c3dbe37f23cd437'),
    'gamma_a05': ('float16', (48,),
        'fd3dd42f28318d328128642ec2315e342d39472d9825eb315a2dd036f12c3240f43d7315ca402b2a'
        '7f3f062c1328fb3a0f3dff38a831633ddc308834a93905029333b02da63983202b28593ce12e093e'
        '5b35c3321827fa1d19324032f92ac528'),
    'gamma_a001': ('float16', (48,),
        '000092004000020000000000000000008a0000000000000000000000000000000000000000000000'
        '000000000000000000000000000000000000000000000000000000000000000000000c0000000000'
        '000000000000000000000a0000000000'),
    'gamma_avec': ('float16', (48,),
        '8401e3314030e7378f404b3c24433f420844384669475b454f4788468446514b4a4b8f496c4cb94a'
        '6c4cda494048654b224d4a4cb14b594def4bf04dfa4c584a124de44c614da74d9f4d194ec64ed550'
        '854dca4e5b4d8b4f844e0351c54ec94d'),
    'loggamma': ('float16', (48,),
        'b8b76fc1c8c04cc0dfc566c252c244c077ba9cc4e7c68fc169c49abd1ac4703400b3b5c9fa3692c5'
        '2031aec4f0c49ab8c0b709bd1cc240b466c2e0c1f0bb1acc6dc12ec41abb1ec8fac55fb44fc4d0b8'
        'f2be08c29fc592c8bec160c0f0c4f3c4'),
    'beta': ('float16', (48,),
        '4739f62eff2c32374138212ed537162c7d2aa33659382d13b62edc2dc002252e63297330f8348e34'
        'c02a8636a2340e1a7b3666258b301a195d364733083ad11f6025d7320a36ea20012c34396f35da39'
        '2d1ab3347232f12cad38e235f32bcb2f'),
    'chisquare': ('float16', (48,),
        '0649b13439364c38b6405f36bc40393d6c3e29422d43393d9240503d0c3c4a476d4673410848e942'
        '7a46523e783425415b4674427d3f3e45283ef345ca412733dc403c3fce403d418340c141e543414a'
        'b93ce341af398943c53ee537823e0238'),
    'f': ('float16', (48,),
        '5431c74089343b382b39f33c6b37363c7049b93b3037e1432f3aee35f43c9541be38553b41394a3f'
        'b5421c3818470d3d0234a637ab3975423837593cc32d74495a3bf5347230a741b741b03488386a2c'
        'ec43c93d0b3ca63e45306d370a427f3c'),
    't': ('float16', (48,),
        '4fc12ec10335314069c01cbf492c083eb0b19bb574af0134adb60c44ef41dfaeff38773c0b3a13b1'
        'dd3866bb412ce53aefb61b3b9a25d13c62b013b373bb11b135255b366ac272b80e31df36c12d21be'
        '83bc10b42a40183f48b805c234bc8038'),
    'generalized_normal': ('float16', (48,),
        'a5be75306fb99c3f23c70d3917c550b446b41ec5d5c158b5dcc249356c3212b8502ce139d2b23fc4'
        '0e3e7f39d83e2e410db8043d6742ebb3cebe60419b499b24f6ba533d2e3decb7a8b1e344b24068c4'
        'c3ab6142ffbbdab66d4acbb7f7b442bd'),
    'weibull_min': ('float16', (48,),
        '6436843c66396640ac344a2610225e3cb82c7636de2dd8381140462e21427a3a20413c41f1405429'
        'd7416e3b26463239093ac6319c398e21a4476b3f9047a541543fa2370d3cca3ea84caa2b9d402a48'
        'c440963f963e404039322a35763e572e'),
    'logistic': ('float16', (48,),
        'c4b9a83326b4f03bdabbb3c1bec2883219c0b2b989bfbeb5283b56bfbd3dc0adc23cde3c903cefc0'
        '783d80293a41b8b400b178bd28b3dec22942463a1d42473d293a8eb820307439d44567c0353c9142'
        '603c7d3a2c39953b3bbd34bb00394ebf'),
    'gumbel': ('float16', (48,),
        '18af5a38ec319e3c32b444bce6bc233833bac1aea5b98e2f493c79b92d3ed5344d3d653d213d7cbb'
        'ee3d5d364c412431173475b7b432f8bc3442d23b2942c33dbc3b76a45f37253bd545b0bad23c9b42'
        'f73c013ceb3a773cfbb6eab2c73a72b9'),
    'maxwell': ('float16', (48,),
        'fa37433f6440e23c013e2c3c233f023ec53a2541c23f78384442f23f443c1e3dfe40c63fc13ec33d'
        '743cb73cd13f5538f93c5f3df0404a3ccc39933c39405c415d3b943def3c3741223dd841ac3c3f38'
        '6d3bc43e8d3f8d425a3d663c653e3a3a'),
    'double_sided_maxwell': ('float16', (48,),
        '76c0d34500bd773d14c4dd3ffcbc7abd0cb886be0ab6b0bfc0ac37416e44bac13a443943b9c2b6bf'
        '2e3f2a43cf42de42b6c064425f4110c30ac1af414e3f5a42f2bc60413440ecbd5ebce841a04068bb'
        '78bbaf4238c5e2c0dd41f4c0acb696bd'),
    'exponential': ('float16', (48,),
        '57368f3a93383b3d1735332b5228673ac42f633686303d38f33cbe30983e3239d23de83dac3d352d'
        '603eb8395e417438f2384433b33810284042a43c35423a3e9a3c2d37143a5d3cd545b72e683da442'
        '883db73c453c1a3da9337535373cc730'),
    'pareto': ('float16', (48,),
        'e03c073e533db13fb13c1d3c113cf83d403ce23c4b3c373d6d3f4f3c8f40893d24402f4010402b3c'
        '7040b83da743493d733d7b3c5e3d103cc544253fb8445b401c3f013dd93de73e9e4c373cdd3f4345'
        'fc3f363fd23e923f823cbe3cc63e4f3c'),
    'cauchy': ('float16', (48,),
        'cdb81c3285b20c3be9baa5c59ec8333145c1bdb882c08fb4393a4bc0ca3d6dac703c943c333ce2c3'
        '653d8428924471b3cbaf5ebd9ab1e2c8314754390a471f3d383966b7992e8b38bd561ec2983b6048'
        'f93b8b394a38ab3a09bd36ba223842c0'),
    'lognormal': ('float16', (48,),
        '9939833c083b873eef38743463336f3c1d369f398d36b03a3b3eb2360340a73b2a3f413f013f2935'
        'c73f173c9542e83a663b1f38283b3d33d943e83dc8439b3fdd3d073a453c9e3da248bd35b73e3944'
        'd93efc3d853d643e3c382139773db736'),
    'lognormal_f32': ('float32', (48,),
        'd836063f86de413e67b3cf3fad193a3fd5fe9f3fec7f2c3f76b1473e652f094049037b3facd4ed40'
        '88bcae3fc46d8e3f8a663d4038703640ace6353f665dd63f615fe63faa2baf3eda6bb73f006b4940'
        '295c6e3fc250a33ff997e23fcbc97d3f08816e3f6d72303f2ef6e23e86039d3ff3d6e53e371ae33f'
        '03e0153f7faf8340a3cc693fde3335404a84f13e176fea3e8d1e733f2c95943faaef893ff46c773f'
        'b038a43effe03c40e6a2173fc407693f29c10d403130343fabfece3fcf326240'),
    'lognormal_f32_rows': ('float32', (8, 3),
        '98f1483ff5b36e3e5a0e4a406225633f4c989b3f087bc83e12ae0a3fb56df93f5050743fc1c80740'
        '9611a83ffaf5a43fff44c03f2e0c2040da68e33e644e9b3f6e0ed63f4b56a03dbe7c923f7b862e40'
        '8a12583f0f3f8c3f17fbd23f3dc77a3f'),
    'dirichlet': ('float16', (16, 3),
        'aa384d2bc335a92d11387536de2b2533b839ae25b937ec379c2894346d390f343736b8350334ca31'
        '8c384d25e129783bcf33fb342037f631d12ea8395d320628293a76259d3485394c1e5a34c739a334'
        '402fc738f51e643740380d2e4e361738'),
    'dirichlet_wide': ('float16', (2, 40),
        'b21e0a276524ad240000e815b102411ac32e05000000260f1100c526ee00d22f912800001c310000'
        '002f10000e01252d39249e1ef9050a2ad505c900a4240000cf083800a5280000000012310800fd19'
        '581d1f010200000066053d20030022002a10202e591149228413140100000000f016000001007619'
        'e004d621d81a1d2c9c224300d302d81c33251038f30f09245f28740840322a0000150000b0015604'),
    'ball': ('float16', (16, 3),
        '1b3ae0285997253603af77aeb3b9c2364eb6da3aaab09ab6fb34aeb94b3153af9da85fb23db60130'
        'c72c4838e6b371b806b913b3ebb77e384336e0385b38d63813a01235f4b2a438d02b593b2db6aa34'
        '243531ba5bac07b7d2b99236402f8634'),
    'ball_p07': ('float16', (16, 3),
        '57352c30bdb04d2fcdb326a0a1b9c828f0a42e35f6b00db0322b2cb5a32feaa2f6a398b4adb56a33'
        'd5248b3760ac2bacc8b21db158ae183126315c33f02e7b3394b05836a8a3f62df12cc73644b1c82c'
        '6b3370b4a4ae43aeadb511311a30cf28'),
}, True: {
    'gamma_a07': ('float16', (48,),
        '87400532a233c5342e2f7231c235e536a53a02339e2d3935a532bf3854315b411340bb210542e330'
        'd0400531912c873c383f813b6f353b3faf34e338013cfc0f10379b32ae3b7b29c02e6e3d7734cf40'
        'd237ca36cf2c68289e358a348e309a2d'),
    'generalized_normal': ('float16', (48,),
        'a53e75306fb99c3f23c70d3917c5503446b41ec5d5c158b5dcc249356cb212b8502ce139d2b23fc4'
        '0ebe7f39d8be2ec10d38043d6742eb33cebe60c19b499b24f6ba533d2ebdecb7a831e3c4b2c068c4'
        'c3ab6142ff3bda366d4acb37f7b4423d'),
    'weibull_min': ('float16', (48,),
        '6436843c66396640ac344a2610225e3cb82c7636de2dd8381140462e21427a3a20413c41f1405429'
        'd7416e3b26463239093ac6319c398e21a4476b3f9047a541543fa2370d3cca3ea84caa2b9d402a48'
        'c440963f963e404039322a35763e572e'),
    'weibull_min_f32': ('float32', (48,),
        '4b94423ecde0a93bb4a20b4054dfe03e2f13b03f3c34bb3e3b63c13b92155940766c5a3f42347641'
        'beebce3fbef28c3fa93fab4012dca240fcf3d43e1b2b1340737e2540b4aa523d1094e13f9eb5b940'
        'c2f7433f60ecb63f1a242140e2725f3f1638443fa7dac53e7027f03d3cfaa93f585af93de4b92140'
        'c4f9823e19aa014173103c3fc65ea140b13a103e1933043e44534c3fe206993f174d843f0cfb533f'
        '3ed4283dce9eaa40090b873eecbd3a3f78f463400b2ad03e58d70a40de61d740'),
    't': ('float16', (48,),
        '4fc12ec10335314069c01cbf492c083eb0b19bb574af0134adb60c44ef41dfaeff38773c0b3a13b1'
        'dd3866bb412ce53aefb61b3b9a25d13c62b013b373bb11b135255b366ac272b80e31df36c12d21be'
        '83bc10b42a40183f48b805c234bc8038'),
    'lognormal_f64': ('float64', (24,),
        '8b071ac08915ed3feae2d68cc78308401c20519e860600406a66c56a0930fc3fc3467d419f131540'
        'ad3d6785a957db3fb7b0d1e92f86d53fed4d792903a5f23fc9b435a23af400409838d7b5f94fc93f'
        '1c25779499defb3f0fac37859ef2d73f9894a9458e0ed53f0466809775bac93f404cdd1ef15be03f'
        '086f8a42629e0240bec7a42517a7d83f18a2bea6dc94e73f42437710b8c4e33f8277d441a3c8ed3f'
        '400650caf2d4f03fc9a1b72680bcfe3f4c22d42f3770ee3f0baaa6b4e8ba0c40'),
    'lognormal': ('float16', (48,),
        '9939833c083b873eef38743463336f3c1d369f398d36b03a3b3eb2360340a73b2a3f413f013f2935'
        'c73f173c9542e83a663b1f38283b3d33d943e83dc8439b3fdd3d073a453c9e3da248bd35b73e3944'
        'd93efc3d853d643e3c382139773db736'),
    'ball_p07_f32': ('float32', (8, 3),
        '26e4e2bda219913da1f890be76e60a3e66e8173fb5d28f3c2d4adbbde1da3e3ef37189bea40bfb3c'
        '9e696abed005a3be91968ebda91d96be42dc33bce15ee8be5102fbbc9d47283eb1fe10bd3d8590be'
        '4277993d73cedb3c9cff2fbeb7e420bd'),
}}


_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _golden(x64, name):
    dt, shape, hx = GOLDEN[x64][name]
    bits = np.frombuffer(bytes.fromhex(hx), _UINT[np.dtype(dt).itemsize])
    return bits.view(dt).reshape(shape)


def _bits(a):
    a = np.asarray(a)
    return a.view(_UINT[a.dtype.itemsize])


@pytest.mark.parametrize("x64, name", [(x64, n) for x64 in (False, True) for n in GOLDEN[x64]],
                         ids=[f"{'x64' if x64 else 'x32'}-{n}" for x64 in (False, True)
                              for n in GOLDEN[x64]])
def test_float16_samplers_equal_jax_eager_jit_vmap(x64, name):
    with nx.enable_x64(x64):
        fn = _samplers(x64)[name]
        want = _golden(x64, name)
        key = nxr.PRNGKey(11)
        eager = np.asarray(fn(key))
        assert eager.dtype == want.dtype and eager.shape == want.shape
        np.testing.assert_array_equal(_bits(eager), _bits(want))
        np.testing.assert_array_equal(_bits(nx.jit(fn)(key)), _bits(want))
        keys = nx.stack([nxr.PRNGKey(3), key])
        np.testing.assert_array_equal(_bits(np.asarray(nx.vmap(fn)(keys))[1]), _bits(want))


def test_gamma_float16_issue_values():
    # jax.random.gamma(PRNGKey(0), 2.0, (4,), jnp.float16) in jax 0.10.2
    got = nxr.gamma(nxr.PRNGKey(0), 2.0, (4,), F16)
    assert got.dtype == F16
    np.testing.assert_array_equal(np.asarray(got), np.array(
        [1.5078125, 0.9580078125, 1.029296875, 2.703125], F16))


_ALL16 = np.arange(65536, dtype=np.uint16).view(F16)
_FINITE16 = _ALL16[np.isfinite(_ALL16)]

# zlib.crc32 of jax.jit(op)(every finite float16) in jax 0.10.2 (NaNs as float16(nan))
XLA_MATH16_CRC = {
    'log': 2722434212,
    'exp': 4019507691,
    'tan': 4192023728,
    'log1p': 873291040,
    'erf': 3142806610,
    'rsqrt': 3427495242,
}


def _crc(r):
    r = np.asarray(r)
    return zlib.crc32(np.where(np.isnan(r), F16(np.nan), r).astype(F16).tobytes())


@pytest.mark.parametrize("op", sorted(XLA_MATH16_CRC))
def test_xla_math_float16_every_argument(op):
    with np.errstate(all="ignore"):
        got = _xla_math(op, _FINITE16)
    assert got.dtype == F16
    assert _crc(got) == XLA_MATH16_CRC[op]
    # the primitive, eager and traced, gives the same bits
    x = nx.asarray(_FINITE16[::37])
    f = nx.jit(lambda v: P.bind(P.xla_math_p, v, op=op))
    np.testing.assert_array_equal(_bits(f(x)), _bits(got[::37]))


def test_xla_pow_float16_grid():
    x, y = np.meshgrid(_FINITE16[::97], _FINITE16[::1013])
    with np.errstate(all="ignore"):
        got = _xla_math("pow", x, y)
    assert _crc(got) == 3308079682      # jax.jit(lambda a, b: a ** b) on the same grid
    f = nx.jit(lambda a, b: P.bind(P.xla_pow_p, a, b))
    np.testing.assert_array_equal(_bits(f(nx.asarray(x), nx.asarray(y))), _bits(got))


# jax.grad(lambda p: jnp.sum(jax.random.ball(PRNGKey(3), 3, p, (5,), dtype) ** 2))(p) in jax
# 0.10.2: p is a traced argument of JAX's ball, differentiable through generalized_normal's
# gamma draws (the implicit reparameterisation gradient, not the derivative of the rejection
# loop's path: finite differences of the draws differ from it by design, as in JAX) and the
# pows; x64 mode (float64), and x32 mode (float32)
BALL_GRAD = {True: [(1.5, 1.438598940957906), (2.0, 0.8667112308087583),
                    (3.0, 0.3883569310701766)],
             False: [(1.5, 1.5623079538345337)]}


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
def test_ball_differentiable_in_p(x64):
    with nx.enable_x64(x64):
        key = nxr.PRNGKey(3)

        def f(p):
            return nx.sum(nxr.ball(key, 3, p, (5,)) ** 2)

        rtol = 1e-12 if x64 else 1e-6
        for p, want in BALL_GRAD[x64]:
            np.testing.assert_allclose(float(nx.grad(f)(p)), want, rtol=rtol)
            np.testing.assert_allclose(float(nx.jit(nx.grad(f))(p)), want, rtol=rtol)
