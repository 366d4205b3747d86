"""multivariate_normal bit for bit with JAX 0.10.2 (x32 and x64 mode) in the cases that need
XLA:CPU's own arithmetic beyond a float32 dot of one covariance matrix (those are
tests/test_random_samplers.py's):

- the float64 Cholesky factor from n = 32: jaxlib's call, SciPy's dpotrf, lower variant, on the
  matrix in Fortran order (nx.linalg.cholesky's faster upper variant rounds otherwise);
- float64 products: one draw through XLA's row-major matrix-vector loop (4 lanes, tiles of 8
  rows), a few draws of a small factor through Eigen's contraction (built without fused
  multiply-adds; the last row of an odd n summed in 4 parts), the rest through YNNPACK or XLA's
  loop (left to right, fused; YNNPACK's in chunks of 512 products, a narrow last tile of
  output rows possibly through its AVX kernel, without fused multiply-adds);
- long float32 dots in YNNPACK: its kernel's order in chunks of 512 tiles of k;
- n = 1: one fused multiply-add, with several draws of one factor sqrt(2) moved onto it;
- a batch of covariance matrices: each factor's dot summed as the dot of one (JAX's einsum drops
  unit batch axes).

The golden values come from jax 0.10.2 (``jax.random.multivariate_normal(PRNGKey(42), mean,
cov, shape, method=...)`` for ``_inputs``), pinned here as the bits of each value.
"""
import numpy as np
import pytest
import scipy.linalg

import nx_rune as nx
import nx_rune.random as nxr
from nx_rune import primitives as P
from nx_rune._kernels import lapack_loops


def _inputs(n, cov_batch, dt):
    i = np.arange(n)
    cov = np.exp(-np.abs(i[:, None] - i[None, :]) / 3.0) + 0.5 * np.eye(n)
    mean = np.sin(i)
    if cov_batch:
        s = 1.0 + 0.25 * np.arange(int(np.prod(cov_batch))).reshape(cov_batch + (1, 1))
        cov = cov * s
    return mean.astype(dt), cov.astype(dt)


# (x64, n, cov's batch shape, shape, method, the result's shape, JAX's values by their bits)
GOLDEN = [
    (False, 12, (), (), 'cholesky', (12,), [
        0xbd0dfdde, 0x3fa9eca0, 0x3fb556bf, 0x3f11801d, 0xbf225e5f, 0xbf19476d, 0xbfd01dc4,
        0x3f7b32b4, 0x3fc2b366, 0x3fcad948, 0xbed6a856, 0x3edc68cc]),
    (False, 5, (), (5,), 'eigh', (5, 5), [
        0xbc0961a8, 0x3f322a6a, 0x3f978f7c, 0x3f1ce1dd, 0xbf605d52, 0xbff5a1a9, 0x3efac4a0,
        0x3f186dfe, 0xbf906ca6, 0xbf6e96b5, 0xbf919776, 0x3e1350cc, 0x3fcd60c6, 0x3fd3203f,
        0xbf95f2c1, 0x3f2e629b, 0x3e7558e0, 0x3f470fe5, 0xbfabb113, 0xc02056c1, 0x3ef7360a,
        0x3fa7fc1a, 0xbde2ee98, 0xbe561011, 0x3f86ece2]),
    (False, 1, (), (5,), 'cholesky', (5, 1), [
        0xbd0dfdde, 0x3f127649, 0x3eb96d21, 0x3e409162, 0xbe1b8dec]),
    (False, 1, (), (5,), 'eigh', (5, 1), [
        0xbd0dfdde, 0x3f127649, 0x3eb96d21, 0x3e409162, 0xbe1b8dec]),
    (False, 1, (), (5,), 'svd', (5, 1), [
        0xbd0dfdde, 0x3f127649, 0x3eb96d21, 0x3e409162, 0xbe1b8dec]),
    (False, 1, (), (), 'cholesky', (1,), [
        0xbd0dfdde]),
    (False, 5, (3,), None, 'cholesky', (3, 5), [
        0xbd0dfdde, 0x3fa9ec9f, 0x3fb556bf, 0x3f11801d, 0xbf225e5e, 0x3e9814e0, 0xbf3ffee2,
        0x3f9a3242, 0x3f301b82, 0x3f052557, 0xbf13a58e, 0x40045a72, 0x404d4a37, 0x402656be,
        0x3ef84726]),
    (False, 5, (3,), None, 'eigh', (3, 5), [
        0xbc0961a8, 0x3f322a6a, 0x3f978f7c, 0x3f1ce1dd, 0xbf605d52, 0xc0094ff5, 0x3ee5845d,
        0x3f0ef1b2, 0xbfa39a63, 0xbf73e1da, 0xbfb24ffe, 0xbc53c240, 0x3fe160d0, 0x3ffe83fa,
        0xbfa1e08b]),
    (False, 5, (3,), None, 'svd', (3, 5), [
        0x3e6a0d70, 0x3f8e8bc3, 0x3f85a6ba, 0x3dd369aa, 0xbfa58f1d, 0xbfaf88d0, 0xbf47f49e,
        0x3fd87a3a, 0x3f32034b, 0xbe89b75f, 0x3f5fc07b, 0x3fc824b6, 0x40164a40, 0x3f4c3c2e,
        0xc031a53e]),
    (False, 5, (3,), (4, 3), 'cholesky', (4, 3, 5), [
        0xbd0dfdde, 0x3fa9ec9f, 0x3fb556bf, 0x3f11801d, 0xbf225e5e, 0x3e9814e0, 0xbf3ffee2,
        0x3f9a3242, 0x3f301b82, 0x3f052557, 0xbf13a58e, 0x40045a72, 0x404d4a37, 0x402656be,
        0x3ef84726, 0x3f8e983f, 0x3ffc959a, 0x3fe2484c, 0xbf5b7247, 0xbe2fd398, 0xbea9584e,
        0xbf3c3c24, 0xc005a6c1, 0xbf5a80e8, 0xbff1f490, 0x3fe94df2, 0xbe0180fc, 0x3db3b060,
        0x3e0058ff, 0x3f900070, 0x3f597131, 0x3f91562a, 0x3f1eb7d7, 0x3f52a145, 0xbec1f10e,
        0xbef3cd4a, 0x3f94a3af, 0x3f9ebd4d, 0xbebd3bd0, 0xbffb27b6, 0xbea3f7ef, 0x3f8c14de,
        0x3f388d50, 0x3e522824, 0xbe868fee, 0xbfa5bc85, 0x3f341c8b, 0x3ff9a0f8, 0x3f70c851,
        0xbf8a0380, 0x3e775531, 0x3f37c2a5, 0x3f229a84, 0x3fc6f21e, 0x3e5eb6dc, 0xbe88c361,
        0x3ecbb6a7, 0x3e1ed708, 0x3e7d98cc, 0x3f36de8f]),
    (False, 5, (3,), (4, 3), 'eigh', (4, 3, 5), [
        0xbc0961a8, 0x3f322a6a, 0x3f978f7c, 0x3f1ce1dd, 0xbf605d52, 0xc0094ff5, 0x3ee5845d,
        0x3f0ef1b2, 0xbfa39a63, 0xbf73e1da, 0xbfb24ffe, 0xbc53c240, 0x3fe160d0, 0x3ffe83fa,
        0xbfa1e08b, 0x3f2e629b, 0x3e7558e0, 0x3f470fe5, 0xbfabb113, 0xc02056c1, 0x3f0a31fc,
        0x3faf1980, 0xbe6cc4bc, 0xbe8030ba, 0x3fa248f0, 0xbfd4fb4a, 0xbf62ab24, 0xbefeceb6,
        0xc03d56f7, 0xbf41a7ed, 0xbe5a297c, 0x3dca7c98, 0x3f5e4237, 0xbd0a7dc0, 0x3d664950,
        0x3f95685f, 0x3ffdf35f, 0x3fe5b515, 0x3f961de0, 0xbf529d36, 0xbe6683b6, 0x3e870ffa,
        0x3e54a6d4, 0x3d57a07c, 0xbf8adcb2, 0xbedbfc4a, 0x3fd284a9, 0x3fde6c24, 0x3fe8d421,
        0xbf638356, 0xbf9fa6ac, 0xbe81d468, 0x3ef0fe1a, 0x3e7ee32a, 0x3e329d5c, 0xbfa73843,
        0xbf0563f8, 0xbf5fd377, 0xbf88bb0d, 0xbf9cba8a]),
    (False, 5, (3,), (4, 3), 'svd', (4, 3, 5), [
        0x3e6a0d70, 0x3f8e8bc3, 0x3f85a6ba, 0x3dd369aa, 0xbfa58f1d, 0xbfaf88d0, 0xbf47f49e,
        0x3fd87a3a, 0x3f32034b, 0xbe89b75f, 0x3f5fc07b, 0x3fc824b6, 0x40164a40, 0x3f4c3c2e,
        0xc031a53e, 0xbf49232a, 0x3f3a081a, 0x3f10a7d2, 0xbffbe8cc, 0xbfa7ec7c, 0x3efd04a8,
        0x3d6bd5a0, 0xbe6c0d14, 0x3f87bd8e, 0x3fa83e48, 0xbfc5a2b5, 0xc0191cd5, 0x3dac3ee8,
        0xbf88df2d, 0xbe02c1bc, 0xbdab9d7a, 0xbe923558, 0x3c87b2c0, 0xbe55d18d, 0xbf95a0b2,
        0x3e02ab56, 0x400d02c6, 0x3f6b7ebb, 0x3ec2007c, 0xbf689eb2, 0x3f34a6b5, 0x3f7bcbc8,
        0x3fa12b6c, 0x3cc10260, 0xbf299c53, 0x3f049e13, 0x40107304, 0x40104601, 0x3fc5e278,
        0xbf95f7f0, 0x3ecbf3b1, 0xbebdcf68, 0x3f4bba61, 0x3f1462d8, 0xbf86c21f, 0x3f231d13,
        0xbc2eb780, 0x3fc91360, 0x3ce277ec, 0xbcaecb40]),
    (False, 9, (2,), (3, 2), 'cholesky', (3, 2, 9), [
        0xbd0dfdde, 0x3fa9eca0, 0x3fb556bf, 0x3f11801d, 0xbf225e5e, 0xbf19476d, 0xbfd01dc5,
        0x3f7b32b2, 0x3fc2b366, 0x3f9f86d4, 0x3f7969fe, 0x40203cbf, 0x4024a886, 0x3fdcd488,
        0x3eb0c9e8, 0x3fe0ebb5, 0x401be3f8, 0x40141bb4, 0xbfe31431, 0x3f50f75a, 0x3ec26e8e,
        0xbfb490b6, 0xc0620cde, 0xbff526e0, 0xbfaba671, 0x3fa271ec, 0xbeeddaa6, 0xbf3b758e,
        0x3f513a39, 0x4027e8e0, 0x3fce9694, 0xbdb098c8, 0xbf84a1d8, 0x3f28c33c, 0x3f9a609e,
        0x3f6d835b, 0x3f0ea0b9, 0x3fad272d, 0x3f1b64bd, 0xbf539a5b, 0xbfb0938f, 0xbf80bd16,
        0xbf1da49f, 0x3f141e7a, 0x3fa645d0, 0xbfb94c86, 0x3f2ff1bc, 0x4004ad81, 0x3f84782c,
        0xbf8edeb5, 0xbf3dd8f4, 0xbeda426e, 0x3ebc22d2, 0x40190c4f]),
    (False, 9, (2,), (3, 2), 'svd', (3, 2, 9), [
        0xbdd84a44, 0x4005ad81, 0x3f701b02, 0xbe0503cf, 0xbe384fd8, 0xbfec6ac6, 0xbec35b80,
        0x3f248c61, 0x3f49ab39, 0xbe75f5c1, 0xbe6e8158, 0x3c044c40, 0xbe8f737a, 0xc00658dc,
        0xc034ea64, 0xbfb77fdd, 0x3d1abb60, 0x4039bb49, 0x3f0094f8, 0x4063b085, 0x3ff8e006,
        0x3fd5e9c6, 0xbf2bef7e, 0x3f46de5c, 0x3fcd80c8, 0x3f8b74c6, 0x3d1eceb0, 0x3facb75e,
        0x3fd8aa4b, 0x3fe0e1aa, 0x3f6f01b0, 0xbfd7a88e, 0xbfc21987, 0xbd9cef48, 0x3fc28484,
        0x4016f1f3, 0xbe532838, 0x3f37e880, 0x3f08b8fd, 0xbf1af59f, 0xbf36c66a, 0xbf679230,
        0xbe898f80, 0xbe3d0d74, 0xbdb93ec8, 0x3f9c5de0, 0x4017463f, 0x4046da31, 0x3e56b2f7,
        0xbe474ea8, 0xbfaab066, 0x3f403d4c, 0x3fd00e77, 0x4003d1ef]),
    (False, 16, (2, 1), (2, 3), 'eigh', (2, 3, 16), [
        0xbfea64fd, 0x3ce51cc0, 0x3eb97802, 0xbfb12b99, 0xbf8ad58a, 0xbf4c9622, 0xbe2b54e4,
        0x3f5cd684, 0x3fccac64, 0x3ef6bfaa, 0xc02168a4, 0xc043d49d, 0xbfd46aa8, 0x3cbcbce0,
        0x3f4ed1b4, 0x3f2d5ad3, 0xc03d1028, 0x3e00271c, 0x3e8f5242, 0x3eea4bdc, 0xbfa93e0e,
        0xbf82d038, 0x3e694c5c, 0x3ee0780c, 0x4020aff5, 0x4013e55a, 0xbf5ac5ca, 0xbf51ba9c,
        0xbe23b5a4, 0x3f14efb8, 0xbe9bd3d4, 0x3f83ac23, 0xbe61b238, 0x3df742d8, 0x3f667e98,
        0xbf40589e, 0xbfa7e8c9, 0xc013a8f2, 0xbfe34d71, 0xbf41cace, 0x3e844126, 0xbf9ba188,
        0xc000a021, 0xbfa08fe5, 0xbf1bcffe, 0x3ecaa68a, 0x3f9bd19a, 0x3fc1e886, 0x3f8bcffd,
        0x40054348, 0x3ed33afb, 0xbf6cdb1b, 0xbfff562a, 0xbfd9faf3, 0xbfba4617, 0x3fb4916e,
        0x3fa9fbcc, 0x3f0cabd9, 0x3f48d080, 0x3e599e60, 0x3df03800, 0x3f9aa414, 0x4027323e,
        0x3fcc136c, 0x3ff8940e, 0x3f308d2d, 0x3f93618e, 0x3ec4ff6e, 0xbfdd7848, 0xbf7c439c,
        0xc02e6962, 0x3e3d0b04, 0x3ef72a2a, 0xbdcf65d8, 0xbf038cca, 0xc060db70, 0xbf38f48c,
        0xbf6ca17f, 0x3ff34c58, 0x40363aa8, 0xbf5a2672, 0x3f9ae513, 0x3eb6e8ce, 0xc0063398,
        0x3eced2f2, 0xbfd5854f, 0xbfb399ab, 0xbf890f68, 0xbe58ff1c, 0x3fc6dd70, 0xc023a088,
        0xc04c5960, 0x3d972600, 0x3f0d9777, 0xbfad617f, 0xbfe204b2]),
    (False, 1, (3,), (2, 3), 'cholesky', (2, 3, 1), [
        0xbd0dfdde, 0x3f23bfe2, 0x3ee31992, 0x3e409161, 0xbe2dea42, 0x3ea698d4]),
    (False, 1, (3,), (2, 3), 'svd', (2, 3, 1), [
        0xbd0dfdde, 0x3f23bfe2, 0x3ee31992, 0x3e409161, 0xbe2dea42, 0x3ea698d4]),
    (True, 32, (), (), 'cholesky', (32,), [
        0xbfccf4eedab6a636, 0xbff99ecdc7619595, 0x3fb4959d8244d758, 0x3fc14aac2f1a8ffd,
        0xbfdc9cc60b922e2e, 0xbfe05085cad81356, 0x3fd3fac1b107352e, 0x3ff34bbbfd9e1dd6,
        0x3fe1538efa752a82, 0xbfd5de37dd9f6b77, 0xbff9d3fcc8ffd2c2, 0xc009a700dee7291c,
        0xbfee6ca82d88880b, 0x3fec6c90c69e61fc, 0x3ff41bf12f230c2d, 0xbf90dd6e5b603fc0,
        0xc005513be564361f, 0xbffa20ffafadb946, 0xc0013efe582042f2, 0x3ff5eccbb52cbeb0,
        0x3ff394bea872c04f, 0xbfcb404f05e15544, 0xbfbb06e0d08513bc, 0xbfb3898790ebb0f0,
        0xbfec2b04cf966e08, 0x4003b9eafde0bd6d, 0x3fff256e39e4195c, 0x3fe2af46ab9ef5d4,
        0x3fdb39914323f02e, 0xbff74b5b8fe334c0, 0xc0006dfc9dc12be7, 0xbff31789ee614245]),
    (True, 40, (), (2,), 'cholesky', (2, 40), [
        0xbfccf4eedab6a636, 0xbff99ecdc7619593, 0x3fb4959d8244d758, 0x3fc14aac2f1a8ffe,
        0xbfdc9cc60b922e2d, 0xbfe05085cad81356, 0x3fd3fac1b107352c, 0x3ff34bbbfd9e1dd6,
        0x3fe1538efa752a83, 0xbfd5de37dd9f6b77, 0xbff9d3fcc8ffd2c2, 0xc009a700dee7291c,
        0xbfee6ca82d888808, 0x3fec6c90c69e61fc, 0x3ff41bf12f230c2c, 0xbf90dd6e5b603fe0,
        0xc005513be5643620, 0xbffa20ffafadb944, 0xc0013efe582042f2, 0x3ff5eccbb52cbeb0,
        0x3ff394bea872c04e, 0xbfcb404f05e15544, 0xbfbb06e0d08513aa, 0xbfb3898790ebb0f8,
        0xbfec2b04cf966e08, 0x4003b9eafde0bd6d, 0x3fff256e39e4195e, 0x3fe2af46ab9ef5d4,
        0x3fdb39914323f032, 0xbff74b5b8fe334c2, 0xc0006dfc9dc12be6, 0xbff31789ee614245,
        0xbfe077e2a3fd664e, 0x3fc9d2ce8425032c, 0xbff8af5e6a99061a, 0xc002c524c4df913e,
        0xc0001b63cbe9d695, 0xbfe7bb36ef0ce985, 0x40019d52c4ba7338, 0x3ff38ed0a1739a85,
        0x3fe4c0c2643ab592, 0x3ff427def8a9024a, 0x3fe924a9a96fe71e, 0xbfeb70890a4d760c,
        0xbfecbd3c88318a16, 0xbff98ed7f39da2de, 0xc002f3317df23ce4, 0x3fea8202c73189c8,
        0x3fcc81b13765af80, 0x3fb5ccabdf794d40, 0xbfd22c81b38742e2, 0xbfe61970abc6652c,
        0xc000f206e60853a0, 0x3fe492da9656d2db, 0x3ff72f707059e4c2, 0x3fb234c9a384ecc0,
        0xbff109c6e1033529, 0xbffa75a9c74ad13c, 0xc003a30ef2f419dd, 0xbff9406252de7ffd,
        0xbfdfb2adc25e38e0, 0x3fd657515b636249, 0x3ff5e31b1be0a31d, 0xbfff713973250d56,
        0x3ff8a78099df5d7c, 0x3fd0ae3d3944c760, 0x3fe6d66766e2ff50, 0x3fd51732690360f4,
        0xbfd025f1cc7e2e3c, 0xbff51e6fc35bf214, 0xc00496a41127ef82, 0xbffa625b005d1318,
        0xc003b87e938f5766, 0xbfec6bcacd310418, 0xbfe3d63d894b82b5, 0xbffb6523ccdf7bc7,
        0xbfeca03610da8ac5, 0xbfa2b4dc237339b0, 0xbfdd4341b461b197, 0x3ff7828a415fa566]),
    (True, 5, (), (), 'cholesky', (5,), [
        0xbfccf4eedab6a636, 0xbff99ecdc7619595, 0x3fb4959d8244d758, 0x3fc14aac2f1a8ffd,
        0xbfdc9cc60b922e2c]),
    (True, 5, (), (), 'eigh', (5,), [
        0xbffb1c14df2ea9b1, 0x3ff479b0f727bcb0, 0x3fdd574c5b3ab5eb, 0xbfef2b69f7ef32d1,
        0xbfb18e1b85924128]),
    (True, 5, (), (), 'svd', (5,), [
        0xbff2e7b9fae4223a, 0xbfe1b3a09422eafc, 0x3ff71ae809b35ab5, 0x3ff819b8a7f28e7b,
        0x3fe5fbe106fb8074]),
    (True, 12, (), (), 'cholesky', (12,), [
        0xbfccf4eedab6a636, 0xbff99ecdc7619595, 0x3fb4959d8244d758, 0x3fc14aac2f1a8ffd,
        0xbfdc9cc60b922e2e, 0xbfe05085cad81356, 0x3fd3fac1b107352e, 0x3ff34bbbfd9e1dd6,
        0x3fe1538efa752a82, 0xbfd5de37dd9f6b77, 0xbff9d3fcc8ffd2c2, 0xc009a700dee7291b]),
    (True, 12, (), (), 'eigh', (12,), [
        0x400246f7c25b6fcf, 0x3ffeff583bdd739d, 0x400847c198cdb802, 0x3fe92700ad23d8eb,
        0x3fd9288e54f5c470, 0xbfa7049136568710, 0x3fea6581d6900348, 0x3ffde9137a5d87e2,
        0x3ff075c07965f598, 0x40027c67f20501a8, 0xbfe1e175f6360da4, 0xbfe2ee71a6f90683]),
    (True, 12, (), (), 'svd', (12,), [
        0xbffa0e1cf8b1c7be, 0xbfd8aeeb76b0a314, 0xbfc07a402f3eb310, 0xbfe5ccb86649c867,
        0xbff446f3aa70fd34, 0xbfdcfcb15f77c708, 0xbff34b29a3a4879c, 0x3fff87bd7a6f94ee,
        0x3ff8b9538bd19f64, 0x40045c58f79068ac, 0x3ff4e227557ddc00, 0x3fcedb259b53015c]),
    (True, 9, (), (), 'cholesky', (9,), [
        0xbfccf4eedab6a636, 0xbff99ecdc7619595, 0x3fb4959d8244d758, 0x3fc14aac2f1a8ffd,
        0xbfdc9cc60b922e2e, 0xbfe05085cad81356, 0x3fd3fac1b107352e, 0x3ff34bbbfd9e1dd6,
        0x3fe1538efa752a83]),
    (True, 5, (), (3,), 'cholesky', (3, 5), [
        0xbfccf4eedab6a636, 0xbff99ecdc7619595, 0x3fb4959d8244d760, 0x3fc14aac2f1a8fff,
        0xbfdc9cc60b922e2d, 0x3fdcec85843fd9e4, 0x3ff74d7176115d32, 0x3ff7a130ed17d3d2,
        0xbfd2c88fed284402, 0xbff80495acfea9c8, 0xbfeb6f658319be1b, 0xbff43b06820e0af9,
        0x3fe1f81eb391d23e, 0x3fe5078789cfe1fa, 0xbfdd320ed8052b44]),
    (True, 5, (), (3,), 'eigh', (3, 5), [
        0xbffb1c14df2ea9b0, 0x3ff479b0f727bcaf, 0x3fdd574c5b3ab5eb, 0xbfef2b69f7ef32d1,
        0xbfb18e1b85924128, 0x3ff0fd556706fb0a, 0x3ff75bd41f5fb5bd, 0x3ffd655642d98f7b,
        0x3fdac64705075f9e, 0xbfeed9908bec9330, 0xbffcc3a0783ea187, 0x3ff595373b7c1f17,
        0x3fe5ef52181d176a, 0xbf9462c13c897a28, 0xbfc5b90adf411374]),
    (True, 5, (), (3,), 'svd', (3, 5), [
        0xbff2e7b9fae4223a, 0xbfe1b3a09422eafc, 0x3ff71ae809b35ab5, 0x3ff819b8a7f28e7b,
        0x3fe5fbe106fb8076, 0xbfe0372c8ad48491, 0x3ff591ef8fcc6560, 0x3fd7b379156a5fe2,
        0xbfdbbdca94561032, 0xbff487f1fe100636, 0xbfe0e609b9b7a928, 0x3fccb0e977ec0264,
        0x400047934c51775e, 0x3fffdc84b1001760, 0x3fd305910ebdc118]),
    (True, 5, (), (5,), 'cholesky', (5, 5), [
        0xbfccf4eedab6a636, 0xbff99ecdc7619595, 0x3fb4959d8244d760, 0x3fc14aac2f1a8fff,
        0xbfdc9cc60b922e2d, 0x3fdcec85843fd9e4, 0x3ff74d7176115d32, 0x3ff7a130ed17d3d2,
        0xbfd2c88fed284402, 0xbff80495acfea9c8, 0xbfeb6f658319be1b, 0xbff43b06820e0af9,
        0x3fe1f81eb391d23e, 0x3fe5078789cfe1fa, 0xbfdd320ed8052b44, 0xbfecd83c7e49c8bf,
        0xbffc340771912c41, 0x3fb11af69487e6f8, 0xbff62d1cfbcf6530, 0x3fd80f8753bc99a0,
        0x3fb1fb4cd53c1862, 0xbfd92d9b39ef68e8, 0x3fe59bb0b10a39c2, 0x3fea02cb9abbaa0a,
        0xbfe9a849dc9791ee]),
    (True, 5, (), (5,), 'eigh', (5, 5), [
        0xbffb1c14df2ea9b0, 0x3ff479b0f727bcaf, 0x3fdd574c5b3ab5eb, 0xbfef2b69f7ef32d1,
        0xbfb18e1b85924128, 0x3ff0fd556706fb0a, 0x3ff75bd41f5fb5bd, 0x3ffd655642d98f7b,
        0x3fdac64705075f9e, 0xbfeed9908bec9330, 0xbffcc3a0783ea187, 0x3ff595373b7c1f17,
        0x3fe5ef52181d176a, 0xbf9462c13c897a28, 0xbfc5b90adf411374, 0xbffe25d3d0bb412f,
        0x3fed1f7444d3591e, 0xbff08f36eb72a715, 0xc004786fd7b98321, 0xc00268e1c39f411e,
        0xbfef10cd8aec37ba, 0x3ff34a88329768fe, 0x3ff49e54f2d608cd, 0x3fc8611efb8f93b0,
        0x3fd46122413bb940]),
    (True, 5, (), (5,), 'svd', (5, 5), [
        0xbff2e7b9fae4223a, 0xbfe1b3a09422eafc, 0x3ff71ae809b35ab5, 0x3ff819b8a7f28e7b,
        0x3fe5fbe106fb8076, 0xbfe0372c8ad48491, 0x3ff591ef8fcc6560, 0x3fd7b379156a5fe2,
        0xbfdbbdca94561032, 0xbff487f1fe100636, 0xbfe0e609b9b7a928, 0x3fccb0e977ec0264,
        0x400047934c51775e, 0x3fffdc84b1001760, 0x3fd305910ebdc11c, 0xbfef04aa43630a06,
        0x3fc2f61ae2731ba8, 0x4005fddc7f58e0c2, 0x3fe60a68fd2563b4, 0x3ffa73c4fbd7ad4b,
        0xbfe785c4c680f572, 0xbfb9bce4f25c6150, 0x3fec3f2995170609, 0x3ff3ae3b5b26a144,
        0xbfdc23df38b23d46]),
    (True, 7, (), (6,), 'cholesky', (6, 7), [
        0xbfccf4eedab6a636, 0xbff99ecdc7619595, 0x3fb4959d8244d760, 0x3fc14aac2f1a8fff,
        0xbfdc9cc60b922e2d, 0xbfe05085cad81356, 0x3fd3fac1b107352c, 0x3fd272213dfc6357,
        0x3fca98a249c96d30, 0x3f930daf19c14e80, 0xbff070d47c16165b, 0xc0084580825828a8,
        0xbff6c772b6cd15fd, 0x3fc382cfe879dd88, 0x3fd1801bf0034df2, 0x3fc7106b51acf7f8,
        0xbff781c2ad51eadf, 0xbfe10aad7edc069e, 0xc0014dda24473c71, 0x3fd0aba9cc0457de,
        0x3f9f73b7b4e00b80, 0xbff719dba1241b9b, 0x3fda6d1e4494fbfd, 0x3ff718c44a2bb948,
        0xbf610996fcdbdf00, 0x3ffb87902bced191, 0x3fc1bf7f363ea9cc, 0xbfe6d810022881a0,
        0x3fab1c72eb378771, 0xbfa0ae419dd9e1f0, 0xbfcc140bdfef3ff8, 0xbfe6319a1f8309c0,
        0xbffdaff5df468d43, 0xbffc7cb7a2c06092, 0xc002f1c436b7ef80, 0xbff12c03c963ab64,
        0x3fd8c2cf50f110f6, 0x3ff37f1b25cb3395, 0x4002b6214b4e67ba, 0xbfd2797eac02e89c,
        0x3fb21fa006c42468, 0x3fd8c5b50f833a3e]),
    (True, 7, (), (6,), 'svd', (6, 7), [
        0xbff623fb63f6f667, 0xbfd90bb60ef681d0, 0x3fdc1d7664d6438a, 0x3fd1006a23fce014,
        0x3fb7c7877af5d8f0, 0x3fa7c7519e37e530, 0x3fff0933ebce5992, 0xbff3741755182d3c,
        0x3fe2c82de086f1ea, 0x3fe422cec35d9f1c, 0xbfeaa1025b2a92b7, 0x3fe2ebf6d1a13aca,
        0xbfe302a2ee107726, 0xbfebd13beac0892e, 0xc00425ec474c9349, 0x3fed4242ccec8f43,
        0x3fe660281715e4b3, 0x3fe5f4f2c8c06d79, 0x3fe110ad544dc8aa, 0xbffaa664a80debc4,
        0xbfe71355b5db367c, 0x4000be9a09ee415e, 0x3ff7b33fe6ff3af5, 0x3feca7845be231d4,
        0x400230ba939b9b1f, 0xbfe56a8b6f5cade6, 0xbfe4d9a900a0c5d2, 0x3ff58bc2260cbe33,
        0xbff2c7340feb19fc, 0x3fe3bfda35a9e5b2, 0x3fcad53f1c7bbc40, 0x3fecace03a0ad17f,
        0xbfe6b8895767a3e2, 0x3fc2336d6f21fcac, 0xbfe46aa5684b8204, 0xbfc6d76a7d1bdf99,
        0x400302e5d1daa7c9, 0x40032636f839e25d, 0x3fd723f69df27490, 0xbfede7c5073558d5,
        0xbfe3cb78531328a0, 0x3ff74585285e9d88]),
    (True, 4, (), (2,), 'eigh', (2, 4), [
        0x3fdbc90952703b64, 0xbfe9ee93f2ebfa2a, 0xbfdb15139e526670, 0x3fe804af14ae8d7c,
        0xbfe84011ae9bd305, 0x3fed052a6b5e82b5, 0x3fe639152f825a63, 0x3fc35663b8593389]),
    (True, 1, (), (5,), 'cholesky', (5, 1), [
        0xbfccf4eedab6a635, 0xc0054285a96c3efa, 0x3fcd4e2e07c5a9ae, 0x3fe7feecf897025c,
        0x3fe3307602ccdaf3]),
    (True, 1, (), (5,), 'eigh', (5, 1), [
        0xbfccf4eedab6a635, 0xc0054285a96c3efa, 0x3fcd4e2e07c5a9ae, 0x3fe7feecf897025c,
        0x3fe3307602ccdaf3]),
    (True, 1, (), (5,), 'svd', (5, 1), [
        0xbfccf4eedab6a635, 0xc0054285a96c3efa, 0x3fcd4e2e07c5a9ae, 0x3fe7feecf897025c,
        0x3fe3307602ccdaf3]),
    (True, 1, (), (), 'svd', (1,), [
        0xbfccf4eedab6a636]),
    (True, 5, (3,), None, 'cholesky', (3, 5), [
        0xbfccf4eedab6a636, 0xbff99ecdc7619595, 0x3fb4959d8244d758, 0x3fc14aac2f1a8ffd,
        0xbfdc9cc60b922e2c, 0x3fe02b40dd979472, 0x3ff876be9ff61df8, 0x3ff8b395f5794c4c,
        0xbfd6110b28256d50, 0xbff96c6ffc95dcb4, 0xbff0ccef3785ec23, 0xbffbcd9aea86ca67,
        0x3fdeefb6a3754d9c, 0x3fe8bda1f39e66a7, 0xbfd8df19d5e95557]),
    (True, 5, (3,), None, 'eigh', (3, 5), [
        0xbffb1c14df2ea9b1, 0x3ff479b0f727bcb0, 0x3fdd574c5b3ab5eb, 0xbfef2b69f7ef32d1,
        0xbfb18e1b85924128, 0x3ff2feb3ea7fd1f6, 0x3ff886d3f7251338, 0x3fff25f78d306b19,
        0x3fdcde6854204c8a, 0xbfefa1f7a0be9f02, 0xc0019d4837bae81b, 0x3ff7685bfd96034c,
        0x3fe45337f83a93c8, 0xbfacb8e6a1ae0460, 0xbfa355ba13c9c740]),
    (True, 5, (3,), None, 'svd', (3, 5), [
        0xbff2e7b9fae4223a, 0xbfe1b3a09422eafc, 0x3ff71ae809b35ab5, 0x3ff819b8a7f28e7b,
        0x3fe5fbe106fb8074, 0xbfe22127537f3ca2, 0x3ff686e364ead50d, 0x3fd3a12dd50aac8a,
        0xbfe00a79d075736b, 0xbff5866faf8c80e0, 0xbfe4b24af7adea8e, 0x3fb5dd5c8b89f8d8,
        0x40024daffba477ea, 0x400341df64ad0a7e, 0x3fe11758529d4536]),
    (True, 5, (3,), (4, 3), 'cholesky', (4, 3, 5), [
        0xbfccf4eedab6a636, 0xbff99ecdc7619595, 0x3fb4959d8244d760, 0x3fc14aac2f1a8fff,
        0xbfdc9cc60b922e2d, 0x3fe02b40dd979472, 0x3ff876be9ff61df8, 0x3ff8b395f5794c4c,
        0xbfd6110b28256d50, 0xbff96c6ffc95dcb4, 0xbff0ccef3785ec23, 0xbffbcd9aea86ca67,
        0x3fdeefb6a3754d9c, 0x3fe8bda1f39e66a8, 0xbfd8df19d5e95556, 0xbfecd83c7e49c8bf,
        0xbffc340771912c41, 0x3fb11af69487e6f8, 0xbff62d1cfbcf6530, 0x3fd80f8753bc99a0,
        0x3fb41aa56089cf5e, 0xbfe140d9cb8d88d2, 0x3fe4b962fc8afd2a, 0x3fec8c4e42d7feb3,
        0xbfe9d3ca9aa0626e, 0x400c4a4175e6967d, 0x40056834e0596c8e, 0x3fe74530050df34a,
        0x3fe0d6573d785d76, 0xbff9639060fddc49, 0xbfecc07b16eb6c9e, 0x3fc1684dba5fc3b8,
        0xbfb939a46aeaf1f0, 0xbfe3b2cf4c46b661, 0xc00664617da95e02, 0xbff332e4da0cc0a5,
        0x3fd553b5d5c17a30, 0x3ff4149c5708e4c5, 0x4004c96a2df1a83b, 0xbfcde05bbb1da0f0,
        0x3fe96ac65677e958, 0x3ff5a8e7bb87abaa, 0x3fe84127321f2915, 0xbff14f8a600433fa,
        0xbfedc1618804d939, 0xbfe0ecd8b7c14955, 0xbff35e6614284c6d, 0x3ff1a15995fd55fb,
        0xbfe384e3d477a2cb, 0xbff129875d7db0c5, 0x3fe50d367be45864, 0x3ff7a70ea17247e1,
        0xbfe4da423bde69e6, 0x3fe1383e5b1ff58b, 0xbfc1af599a213330, 0xbff08282804542c9,
        0xbfd8d0e3244d026c, 0xbfc207212485ad30, 0xc000b99eee7ddd8e, 0xc007d1c4791284f6]),
    (True, 5, (3,), (4, 3), 'eigh', (4, 3, 5), [
        0xbffb1c14df2ea9b0, 0x3ff479b0f727bcaf, 0x3fdd574c5b3ab5eb, 0xbfef2b69f7ef32d1,
        0xbfb18e1b85924128, 0x3ff2feb3ea7fd1f6, 0x3ff886d3f7251338, 0x3fff25f78d306b19,
        0x3fdcde6854204c8a, 0xbfefa1f7a0be9f02, 0xc0019d4837bae81b, 0x3ff7685bfd96034c,
        0x3fe45337f83a93c8, 0xbfacb8e6a1ae0450, 0xbfa355ba13c9c760, 0xbffe25d3d0bb412f,
        0x3fed1f7444d3591e, 0xbff08f36eb72a715, 0xc004786fd7b98321, 0xc00268e1c39f411e,
        0xbff15dc081683e48, 0x3ff3fa9f7e2e05ea, 0x3ff555bd28187db8, 0x3fc91ff86288075e,
        0x3fdc807d5d8d8110, 0x40001b269f9b57ad, 0x3fd17b9ade40c4f6, 0x40048e4d765d5e44,
        0xbfcec49eecaa4b5d, 0x3ff3c8691663563b, 0x3ff5658f71a5fc27, 0x40051aa76b1bec70,
        0x3ff9d41012e3f85c, 0x3ff79f8b7f0c5c96, 0x3fddfa53f48d4468, 0xbffcb18a6a30ec74,
        0x3fe2427a758613b9, 0x3ff3807e9b852724, 0x4001a4e0e45c330c, 0x3fe475fe27f38c8e,
        0x3ff03651d48e4a97, 0x3fe8ff322093548f, 0x3fe6c7dc62987e7e, 0xbfef3ca9846e4b03,
        0xbff818ec51e8aa9b, 0xbfec3c51d5e2d037, 0x40019dbd7810cf5c, 0x3ff3ec1451d6257a,
        0xbfe54e6841724513, 0xbff2e5f5cc0b5167, 0x3fb68ba0a4afb3a4, 0xbfe73599f733682a,
        0xbfdaa74d7210e894, 0xbfd1ea129f27c9ba, 0x3fd4c874ffa96c2c, 0x3ffad39658781108,
        0x40098bda37d6e94c, 0x3ff451b55b55b7ad, 0x3fd42fac3b0f6020, 0xbfe73b4669cfda49]),
    (True, 5, (3,), (4, 3), 'svd', (4, 3, 5), [
        0xbff2e7b9fae4223a, 0xbfe1b3a09422eafc, 0x3ff71ae809b35ab5, 0x3ff819b8a7f28e7b,
        0x3fe5fbe106fb8076, 0xbfe22127537f3ca2, 0x3ff686e364ead50e, 0x3fd3a12dd50aac8a,
        0xbfe00a79d075736b, 0xbff5866faf8c80e0, 0xbfe4b24af7adea8e, 0x3fb5dd5c8b89f8d8,
        0x40024daffba477ea, 0x400341df64ad0a7f, 0x3fe11758529d4536, 0xbfef04aa43630a06,
        0x3fc2f61ae2731ba8, 0x4005fddc7f58e0c2, 0x3fe60a68fd2563b4, 0x3ffa73c4fbd7ad4b,
        0xbfea4c8ac250171f, 0xbfcb19e49ae78480, 0x3fec2574525ddb58, 0x3ff5bcb0043af1ae,
        0xbfd9be9dee017b56, 0xbff8fb421caac4ec, 0xbff786f954d044e1, 0xc0092ce1ea095bd8,
        0xc00203b29769ebb6, 0xc0045c92990dea5e, 0x3fd508aa0d366e52, 0x4000365fdc8d1744,
        0x3fe0e27207e981a6, 0x3ff5fc62ed3ed443, 0x3fb42596b2963630, 0x3ff28e1910a5ce88,
        0x3fec5cc9582ef8e9, 0x40001b9449115fc4, 0x40034b480bf10acb, 0xbff4a854e1225a16,
        0xbfe14fd6991ff370, 0x3fe769107ce06aa3, 0x3fc6f3e85f5cc940, 0xbff46c3c3f87027c,
        0xbfe463cedc630c68, 0xbff8e78cdf8048e0, 0x3fe8b99ee3ae5c4b, 0x3fff26fd8392bec2,
        0x3ff397f847e8a4f1, 0x3fd95c3395d25830, 0x3ff2412ee36671e5, 0xbfd9fff2e3d4d294,
        0xbfd620a626d23718, 0xbfe1ae1bd9470358, 0xbfe4632b636b2682, 0xbfd759a4255eee88,
        0x40034990c9f94136, 0x3fee4d4717426f49, 0x3fec56c21f81490c, 0x3feccb7f8d8f1c68]),
    (True, 9, (2,), (3, 2), 'cholesky', (3, 2, 9), [
        0xbfccf4eedab6a636, 0xbff99ecdc7619593, 0x3fb4959d8244d758, 0x3fc14aac2f1a8ffe,
        0xbfdc9cc60b922e2d, 0xbfe05085cad81356, 0x3fd3fac1b107352c, 0x3ff34bbbfd9e1dd6,
        0x3fe1538efa752a83, 0xbfebceceee3091f6, 0xbfda9b996e774d34, 0xbff9b4e918a8e5e3,
        0xbfd6e43320ecac92, 0xbfd093c73b727bb5, 0xbfe5bf38550f13ba, 0xbff09b9a6bffd2f0,
        0xc00013e3ce77636f, 0x3fcda7e9bb4b04b4, 0xbfedf48e291687a6, 0x40031a8eedd224f9,
        0x3ff7624168d74634, 0xbfe78a740c1ca015, 0xbfe75a3b79a2482a, 0xbfb9aff1d21f1840,
        0xbfc863cf86e5592f, 0x400a67ba8cefa09c, 0x4001a603cd4b30d5, 0xbff866bd1757674c,
        0x3fc51dae1f0793d4, 0xbfe2c061cd92bece, 0xbff7cd080f6278e1, 0xbfff3d5ee93e2d62,
        0xc00300a8484a7927, 0xbff5528fefbb0708, 0xbffc654acff77de6, 0xbff3cda8be7b0c1a,
        0x3fb0edc38f5b0a09, 0x3ff8882d325ab554, 0x400b1643955acaca, 0x3fe9e92756bec49b,
        0x3fdaa898670c753c, 0xbfc8427bdc5bb168, 0xbfc35ecc1a80dfb6, 0xbfc49c6fe0f694d8,
        0x3fef47af879ef37a, 0xbfe2ec450c0f6c58, 0xbff73e7b61e946ad, 0x3ff1fe7690a05691,
        0xbfe65b258833d20e, 0xbff1c239ad2f3836, 0xbfe518a5fe5cb8d2, 0x3fb2a7fa6216f2e0,
        0xbff1b52367435a5b, 0x3ff3ddf738821ac6]),
    (True, 9, (2,), (3, 2), 'eigh', (3, 2, 9), [
        0xbfdb62b00a7d4318, 0x3ffd1fdb4d36c778, 0x3fe0be8a06031d8f, 0x3ff60982c661c0cd,
        0x3fbe5af3d9476c80, 0xbfdd57cbd1aa634a, 0x3fe859c6c5691ab8, 0x3fbe7842f7ecc960,
        0x4001b02d73355594, 0x3ff2d02e2eb08f97, 0x400c6c0dc3edc7f2, 0x3fea6a86f8e34184,
        0x3fca7c2e8827d1fa, 0xbfe4fc941f3b8cc5, 0xc002e48efbf0bd85, 0xc005658ff924675b,
        0xbfe301a3b6fceb4a, 0x3fc4f79dc94041f0, 0xbff2603c24de6193, 0xbffbc33f33fc21c3,
        0x3fa5225fe5488c00, 0xbfb67803fabe21c6, 0xbff2e2c9182a380c, 0xbfdec570975bccbe,
        0xbfcb795b5c459c19, 0x400b6f99049396b4, 0x4002c865371083d7, 0x3ffd289b98bde485,
        0x4008e9d2c4285476, 0x3ffce537ec37a974, 0x3ffac702b6f38f72, 0xbfd238b38e81fa32,
        0xbfe22f7f39365abe, 0xbfe078185ca984a6, 0x3ff32f27781a86ea, 0xbfd5a71a6cffb256,
        0x3ff836daedfaef72, 0x3fcc481b7efd77a0, 0x3ffa595001a98c5f, 0x3fe2dacdb8f82933,
        0xbffb69e4d662e1d8, 0xbff36acdbed17240, 0xbff083070281886a, 0xbfe22ed6858a8ecc,
        0x3fee43640ec735bc, 0x3fd9b72e23cd4243, 0x3ff64ef32bee8a3c, 0x3fe672f5913db3f1,
        0x3ff6f82bd9f71d83, 0xbffefd7cbce97ff5, 0xc004dbd41d181bcb, 0xbff498c24ad898c8,
        0xc0001c4a3ee1dc89, 0xbfc6db3d13d1a5ec]),
    (True, 7, (3, 1), (3, 4), 'cholesky', (3, 4, 7), [
        0xbfccf4eedab6a636, 0xbff99ecdc7619595, 0x3fb4959d8244d760, 0x3fc14aac2f1a8fff,
        0xbfdc9cc60b922e2d, 0xbfe05085cad81356, 0x3fd3fac1b107352c, 0x3fd272213dfc6357,
        0x3fca98a249c96d30, 0x3f930daf19c14e80, 0xbff070d47c16165b, 0xc0084580825828a8,
        0xbff6c772b6cd15fd, 0x3fc382cfe879dd88, 0x3fd1801bf0034df2, 0x3fc7106b51acf7f8,
        0xbff781c2ad51eadf, 0xbfe10aad7edc069e, 0xc0014dda24473c71, 0x3fd0aba9cc0457de,
        0x3f9f73b7b4e00b80, 0xbff719dba1241b9b, 0x3fda6d1e4494fbfd, 0x3ff718c44a2bb948,
        0xbf610996fcdbdf00, 0x3ffb87902bced191, 0x3fc1bf7f363ea9cc, 0xbfe6d810022881a0,
        0x3fae4fa8638fed79, 0xbfc1602979b00324, 0xbfd690b3bb2cb59c, 0xbfe958ad90c6fc31,
        0xbfffc31ff8891c3d, 0xbffe09e5bb67a556, 0xc004eaa8dd0c6484, 0xbff332e4da0cc0a5,
        0x3fd553b5d5c17a30, 0x3ff4149c5708e4c5, 0x4004c96a2df1a83b, 0xbfcde05bbb1da0ec,
        0x3fc89e7f3435302c, 0x3fddce98e2868b26, 0xbfe00be9fa6bab57, 0xbfe229044f9b2fc4,
        0x3fe13467d1a73354, 0xbfe73957b0845d16, 0xc0099ea4eee2c756, 0xbfeb11e296883a1d,
        0xbff316153a111758, 0x3fb0f395601b85e2, 0x3ff737847b30a8d8, 0x3ff7c7ad05917e8f,
        0xbff76339865a2167, 0xbfd8e9c4e0c6b820, 0xbfd721bc43d695b2, 0xbfebb73346aa5f85,
        0xbfead1ded765e515, 0x3fa4365739267f80, 0xbff25d5b2343b04d, 0xbfff47ce339b9019,
        0xc003bc6deaf4b9a6, 0xbff8bb1e17f4ad40, 0x3ff6a0cf87149cca, 0xc0012a2fe49b75dd,
        0x4009f7f1b8662922, 0x3fef53fefff05dcd, 0xbfcb63ac626a964d, 0xbffbc704e11be823,
        0xbffc057d4550e888, 0xbff311c6f03d0d2c, 0xbffbe7486a3ee9d2, 0xbfe399bff8fe481a,
        0xc005ebf5e00c8d06, 0xc0011f2ebce5dced, 0xc001225ec5aed0e2, 0xc0041fe738ebd142,
        0xbfc31018bf2efeec, 0x3ff26a7005a78d24, 0x3fce826738a09180, 0x3ffc120256f8eae7,
        0x3fe9a07a102582af, 0xbfe6b3b65be2c3a1, 0x3ff4f10a7b913f96, 0x3fd5a6683ce588dc]),
    (True, 1, (3,), None, 'eigh', (3, 1), [
        0xbfccf4eedab6a636, 0xc007c4ecb9d72679, 0x3fd1f220cc87c348]),
    (True, 33, (2,), None, 'cholesky', (2, 33), [
        0xbfccf4eedab6a636, 0xbff99ecdc7619595, 0x3fb4959d8244d758, 0x3fc14aac2f1a8ffd,
        0xbfdc9cc60b922e2e, 0xbfe05085cad81356, 0x3fd3fac1b107352e, 0x3ff34bbbfd9e1dd6,
        0x3fe1538efa752a82, 0xbfd5de37dd9f6b75, 0xbff9d3fcc8ffd2c2, 0xc009a700dee7291b,
        0xbfee6ca82d88880b, 0x3fec6c90c69e61fa, 0x3ff41bf12f230c2d, 0xbf90dd6e5b603fa0,
        0xc005513be5643620, 0xbffa20ffafadb945, 0xc0013efe582042f2, 0x3ff5eccbb52cbeb0,
        0x3ff394bea872c04d, 0xbfcb404f05e15544, 0xbfbb06e0d08513b4, 0xbfb3898790ebb0f0,
        0xbfec2b04cf966e0a, 0x4003b9eafde0bd6d, 0x3fff256e39e4195c, 0x3fe2af46ab9ef5d4,
        0x3fdb39914323f030, 0xbff74b5b8fe334c1, 0xc0006dfc9dc12be6, 0xbff31789ee614245,
        0xbfe077e2a3fd664e, 0xbfd22e47cf2187ed, 0xbff12340467710ae, 0xbfee85e4f2243984,
        0xbfe998810863fcc3, 0xbfe71cd82eeaab50, 0x3ff465583c8c8694, 0x3fb56d779d17faf8,
        0x3ffb1830ed0febf6, 0x3ffa6f7eb535149b, 0x3fda7d9924d4c0e7, 0xbff8f560a7e8b200,
        0xbff15fa1b62cfed0, 0xbff32de72eedacb4, 0xbffe0f5b9590461c, 0x3ff3570b9cc8b5b8,
        0xbfc80b3db4597d00, 0xbfe4798f8ac35641, 0xbfe525fd44f98953, 0xbfd97a53337d084f,
        0xbff9d07b94c9c73b, 0x3ff2a6401921e801, 0x3ff5a10c630da30d, 0xbfe4f1fcb25309ed,
        0xbffb6ae11e2f0a3a, 0xbffadbdea05b4954, 0xc0004a8765d81be6, 0xbff2b4543f858212,
        0xbfe3c45d75e9693e, 0xbfd188bfa2bef8b0, 0x3fec06f84a3bea47, 0xc001e942a800bc62,
        0x4002a67d391ad768, 0x3fefb529d27e1ecb]),
]


def _draw(how, mean, cov, shape, method):
    key = nxr.PRNGKey(42)

    def draw(k, m, c):
        return nxr.multivariate_normal(k, m, c, shape, method=method)
    if how == "eager":
        return draw(key, mean, cov)
    if how == "jit":        # mean and cov traced too
        return nx.jit(draw)(key, nx.asarray(mean), nx.asarray(cov))
    return nx.vmap(draw, in_axes=(0, None, None))(nx.stack([key, key]), mean, cov)[1]


@pytest.mark.parametrize("how", ["eager", "jit", "vmap"])
@pytest.mark.parametrize("case", range(len(GOLDEN)), ids=[
    f"{'x64' if c[0] else 'x32'}-n{c[1]}-cov{list(c[2])}-shape{c[3]}-{c[4]}".replace(" ", "")
    for c in GOLDEN])
def test_multivariate_normal_is_jaxs(case, how):
    x64, n, cov_batch, shape, method, out_shape, bits = GOLDEN[case]
    dt = np.float64 if x64 else np.float32
    want = np.array(bits, np.uint64 if x64 else np.uint32).view(dt).reshape(out_shape)
    with nx.enable_x64(x64):
        got = np.asarray(_draw(how, *_inputs(n, cov_batch, dt), shape, method))
    assert got.dtype == dt
    np.testing.assert_array_equal(got, want)


# Long dots in YNNPACK: float64 n = 257 and 259 leave a last tile of 1 and 3 output rows,
# which its cost model gives the AVX kernel (no fused multiply-adds) for 3 and 4 draws;
# float64 n = 600 and float32 n = 1088 (tile_k 1) sum in chunks of 512 products, float32
# n = 1056 (tile_k 2) of 1024.  (x64, n, cov's batch shape, shape, method, the columns pinned,
# the result's shape, the SHA-256 of all values, JAX's values of those columns by their bits;
# jax 0.10.2)
LARGE = [
    (True, 257, (), (3,), 'cholesky', (250, 257), (3, 257),
     '844c14f79d84cf097a4a26fa26f34c44a2c0b75cbeb0b8bd50b7b3227d5e592c', [
        0x3fa72e403e8eafa0, 0x3feaa44beb320c3f, 0x3feaddb54e1052c4, 0x3fd8193c6f6c252a,
        0x3feb10104a136310, 0x3fe0e95cddc4b37f, 0x3fd867cf0963f4a6, 0xbfe446490074d70e,
        0xbfc11eabcb946194, 0x3fbbc015743bc3e0, 0xbfc0ddcba292d2c0, 0xbfd23a498ca5fce8,
        0xbfefb7c2c0c5baf8, 0xbfd96f2b1fbceba6, 0xbff9cc5c018bfbee, 0xbff336bfab447a96,
        0xbfec92e765b98fbf, 0x3fc65cff06bc94c8, 0xc004ffac1732e07e, 0xbff52c3ebbd1b625,
        0xbff658a04d98ee97]),
    (True, 600, (), (2,), 'cholesky', (506, 518), (2, 600),
     '13b2d4ac6d865eb6331845a49fff76a9268f7ae74c0aa53339f96de46e507769', [
        0xbfe0cee009f152de, 0xbfe31591ecaaf3dd, 0xbfe3cb0ef25c8eb4, 0xbfdcf86a55c72412,
        0xbfd035816d507d2c, 0x3fc28e2d911f80fc, 0xbfd9eff84effde36, 0xbfc8d6733d077a68,
        0xbfff058403db50c8, 0xbff04b1d7c39873c, 0xbfe1d2bd44aab67a, 0xbff24380318db4f5,
        0x3fe6a2673a4cec12, 0xbfd0bdecfd00f4e6, 0x3fd968bb2d90fbc4, 0x400036552568d80c,
        0x3ffe4638b7a951f8, 0x4009ed3143a38ad8, 0x3ff5109fdf4a526d, 0x3ff1925712e64f47,
        0x3fdd6a06e4ca953c, 0x4002d66507130655, 0x4002738811f1ae0c, 0x4006a51e742f8eb2]),
    (True, 259, (2,), (4, 2), 'eigh', (252, 259), (4, 2, 259),
     'c9a4000a89e34c8b51d2cc3996e7f96452612001e753915637f4fc450cecd3d4', [
        0xbfdd430a23937aca, 0x3fe59d752cf6c5c9, 0xbf800c583753dfe0, 0xbfe740885127958c,
        0x3fe168c77b9f74a9, 0xbfb0cedd93512f80, 0x3ffb8cd7c7dcb7a9, 0x3fd8be063805aa66,
        0xbfdd4194ef3500d4, 0x3ff9eca72cda7cc7, 0xbfeb6e5e36bcb54a, 0x3fe83e056a642f79,
        0x3fcd8563ced351ec, 0x3ff1e9a1e1dd898e, 0xbfe5f195c3b6ea1b, 0xbfdb95ad4c2f10a4,
        0xbfd8866c3f05103c, 0x3fff78f890a042e6, 0x3fbf1a88a4e385c8, 0x400a9edbff6e4e1d,
        0x400a81503873dce0, 0xbfecf53ec1fa8805, 0x3fd78cfbd6153ac0, 0x3ff7dda53d195542,
        0xbfe6c90794a7b9eb, 0xbff92ccc660bdbdf, 0xbff01655f19c52f2, 0x3fba543c1a87c21c,
        0x4005af8c57d2115b, 0x400464802148c8a8, 0x3fff63653d53774a, 0x400122e73c41ab65,
        0x3fd5a22b13fff24e, 0xbff55694eef74fe0, 0xbfffe2f0e0c5e6ee, 0xbfeea10bbf76878b,
        0xbffc54857cb154a2, 0x3ff4d12362bfe137, 0x3fe39d6c3a495e13, 0xc00685aca4f7aa7a,
        0xc0017c98e5ca0f8d, 0x3fe2e343c0dee82a, 0x3ffa979945e2891a, 0x4001fbaefb7e49c0,
        0xbfd39f14d37ad372, 0xbffb8cbf40901892, 0xc01192b0912f5565, 0xc00c11dc10c2c3b9,
        0xbfed4107b8cdb94e, 0xbff710b975811c32, 0xbfec2d549b9d43e2, 0xbfe6b3bbfd8329c4,
        0xbffd9dbf791bd966, 0x3fca3ad320277e74, 0x400057aa59c41073, 0x3fef89f5da3f963a]),
    # float64 svd from about n = 300: jaxlib's dgesdd is SciPy's build (NumPy's rounds otherwise)
    (True, 300, (), (3,), 'svd', (100, 108), (3, 300),
     '31697288c697d4f028ac3a90e815e436a9f49b9a66b49bb2fd195c9c505c3dc7', [
        0xbff7f57c3533f7ca, 0xbfe34d63b1db11d2, 0x3fdee8034e3a3db4, 0xbfd03128fc1ad18c,
        0xbfe7f34debb75906, 0xc00098b53cca2d64, 0xc00554d0d5e362d9, 0xbf8192b71f5c4110,
        0xbff7b3e6eda6f1c0, 0x3fe4367160a84f00, 0x3fea9f5553aa9705, 0x3fef2807ea771792,
        0x3fe6803db9a5f688, 0xbfe13f12d4c3a80c, 0xbfe72e49946062a4, 0x3fe0d236762e0002,
        0x3fe2033ee6e40b16, 0xbff6c1455b491be8, 0xbff33b674ffed291, 0xc001941474205226,
        0xc000f74558696d21, 0xc000693e17bba842, 0xc00180b41d2f015f, 0xbfe86efe83bd8157]),
    # float32 eigh from about n = 600: jaxlib's ssyevd runs with flush-to-zero on (XLA's custom
    # calls), the covariance's subnormal entries read as zero
    (False, 600, (), (3,), 'eigh', (200, 208), (3, 600),
     '0be390000767539b7f5663f48aaa534079b9a3b786b0506e11255ff792129ac8', [
        0xbf054f8f, 0x3fa42375, 0x3fd23a0a, 0x403258c4, 0x3fad7804, 0xc009ec65, 0xbfec9722,
        0x3f0aeab8, 0xbdc53d68, 0x3fd9e6f6, 0x400ae69a, 0x4019b642, 0x3f8842eb, 0xbe80cb04,
        0xbec38f0e, 0xc0041d2a, 0x3eaa8e22, 0xbf2bbbee, 0xbfb285a4, 0xbf14abc4, 0xbfa350d8,
        0xc02f6d0c, 0xbfb45ed9, 0xbe5a9caa]),
    (False, 1088, (), (3,), 'cholesky', (508, 516), (3, 1088),
     '666cf04fc6383745d6090a97908f6dbc1e8508d33b810f81a4cab9b3ebec8827', [
        0xbf4e7848, 0xbf15924d, 0x3fbfbc08, 0x3fe90856, 0xbf55c8f5, 0xc00131d1, 0xbf4f8eac,
        0x3f0a43ee, 0xbfb7394e, 0x3edd4297, 0x3fe49200, 0x3ffbc7f1, 0x4014e953, 0xbfb85096,
        0xbf713656, 0x3ee24b17, 0xbec36f3b, 0x3d1d2d53, 0x3f96dfdc, 0x3fe15ae0, 0xbeb8e4d0,
        0x3eb33e7e, 0xc001c7c6, 0xbf2cefb4]),
    (False, 1056, (), (2,), 'cholesky', (1020, 1030), (2, 1056),
     '1058aa32059b01927a3410050f923d3d8b3aa11200ed2a518f09b44d5325f0e1', [
        0xbdfa2db8, 0x400fa8b6, 0x3f5a9b59, 0xbfdfb153, 0xbfc74db8, 0x3fa0f3d2, 0x3f9a20e9,
        0x3f8d8a40, 0x3f8807a3, 0x3d1d8200, 0x40103d46, 0x3ff5a0fd, 0xbf8378b4, 0x3f57cffd,
        0x3f2454f1, 0x3e37cfd0, 0x3efd2233, 0xbfc75af5, 0xbebafb66, 0xbea45d72]),
]


@pytest.mark.parametrize("how", ["eager", "jit", "vmap"])
@pytest.mark.parametrize("case", range(len(LARGE)),
                         ids=[f"{'x64' if c[0] else 'x32'}-n{c[1]}-shape{c[3]}-{c[4]}"
                              .replace(" ", "") for c in LARGE])
def test_multivariate_normal_long_ynnpack_dots_are_jaxs(case, how):
    import hashlib
    x64, n, cov_batch, shape, method, (lo, hi), out_shape, digest, bits = LARGE[case]
    dt = np.float64 if x64 else np.float32
    with nx.enable_x64(x64):
        got = np.asarray(_draw(how, *_inputs(n, cov_batch, dt), shape, method))
    assert got.shape == out_shape and got.dtype == dt
    want = np.array(bits, np.uint64 if x64 else np.uint32).view(dt).reshape(
        out_shape[:-1] + (hi - lo,))
    np.testing.assert_array_equal(got[..., lo:hi], want)
    assert hashlib.sha256(got.tobytes()).hexdigest() == digest


def test_ynn_dot_f64_unfused_tiles():
    """The output tiles of a float64 (m, n) x (n, n) dot whose kernel YNNPACK's cost model
    picks without fused multiply-adds (on an AVX-512 processor; checked against jax 0.10.2's
    sums for n up to 1,500 and m up to 40): a last tile of up to 4 output rows for 2, 3, 4 or 6
    draws."""
    from nx_rune.random._ynn import dot_f64_unfused_tiles
    assert dot_f64_unfused_tiles(3, 257, 257) == ((0, 3, 256, 257),)
    assert dot_f64_unfused_tiles(6, 260, 260) == ((0, 6, 256, 260),)
    assert dot_f64_unfused_tiles(2, 1025, 1025) == ((0, 2, 1024, 1025),)
    assert dot_f64_unfused_tiles(5, 257, 257) == ()
    assert dot_f64_unfused_tiles(8, 257, 257) == ()
    assert dot_f64_unfused_tiles(3, 263, 263) == ()
    assert dot_f64_unfused_tiles(3, 256, 256) == ()


@pytest.mark.parametrize("n, batch", [(5, ()), (40, ()), (64, (2, 3)), (33, (1,))])
def test_cholesky_jaxlib_call_is_scipys_lower_dpotrf(n, batch):
    """The cholesky primitive's ``jaxlib_call`` (multivariate_normal's factor): SciPy's
    dpotrf with uplo "L" on the matrix, the call jaxlib makes, bit for bit, eager, under jit
    and vmap; the default float64 path (the upper variant on the transpose) stays
    nx.linalg.cholesky's."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal(batch + (n, n))
    a = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    want = np.empty_like(a)
    for idx in np.ndindex(batch):
        want[idx] = scipy.linalg.cholesky(a[idx], lower=True)
    chol = lambda x: P.bind(P.cholesky_p, x, jaxlib_call=True)  # noqa: E731
    np.testing.assert_array_equal(np.asarray(chol(nx.asarray(a))), want)
    np.testing.assert_array_equal(np.asarray(nx.jit(chol)(nx.asarray(a))), want)
    if batch:
        np.testing.assert_array_equal(np.asarray(nx.vmap(chol)(nx.asarray(a))), want)
    np.testing.assert_array_equal(np.asarray(nx.linalg.cholesky(a)),
                                  np.asarray(P.bind(P.cholesky_p, nx.asarray(a))))


def test_potrf_lower_f64_rejects_bad_arrays():
    a = np.eye(3)[None]
    with pytest.raises(ValueError, match="potrf_lower_f64"):
        lapack_loops.potrf_lower_f64(a.astype(np.float32), np.empty((1, 3, 3)))
    with pytest.raises(ValueError, match="potrf_lower_f64"):
        lapack_loops.potrf_lower_f64(a, np.empty((1, 3, 2)))
    with pytest.raises(ValueError, match="potrf_lower_f64"):
        lapack_loops.potrf_lower_f64(np.asfortranarray(np.eye(3)[None].repeat(2, 0)),
                                     np.empty((2, 3, 3)))
    out = np.empty((1, 3, 3))
    assert lapack_loops.potrf_lower_f64(a, out) == -1
    assert lapack_loops.potrf_lower_f64(-a, out) == 0       # not positive definite


def test_not_positive_definite_cov_raises():
    with nx.enable_x64(True):
        with pytest.raises(np.linalg.LinAlgError):
            nxr.multivariate_normal(nxr.PRNGKey(0), np.zeros(40), -np.eye(40))


@pytest.mark.parametrize("n, cov_batch, shape, method", [
    (40, (), (3,), "cholesky"), (5, (), (4,), "cholesky"), (1, (), (3,), "eigh"),
    (5, (2,), (3, 2), "cholesky"), (1, (3,), None, "svd")])
def test_derivatives_match_finite_differences(n, cov_batch, shape, method):
    """float64 samples differentiated in mean and cov (a symmetric direction) against central
    differences of the samples themselves (the new summation orders keep the exact product's
    derivative)."""
    rng = np.random.default_rng(3)
    with nx.enable_x64(True):
        mean, cov = _inputs(n, cov_batch, np.float64)
        w = rng.standard_normal(np.broadcast_shapes(
            shape if shape is not None else cov_batch, cov_batch) + (n,))
        d = rng.standard_normal(cov.shape)
        d = d + np.swapaxes(d, -1, -2)

        def f(m, c):
            x = nxr.multivariate_normal(nxr.PRNGKey(7), m, c, shape, method=method)
            return nx.sum(x * w)
        gm, gc = nx.grad(f, argnums=(0, 1))(nx.asarray(mean), nx.asarray(cov))
        h = 1e-6
        fd_c = (float(f(mean, cov + h * d)) - float(f(mean, cov - h * d))) / (2 * h)
        dm = rng.standard_normal(mean.shape)
        fd_m = (float(f(mean + h * dm, cov)) - float(f(mean - h * dm, cov))) / (2 * h)
    np.testing.assert_allclose(float(np.sum(np.asarray(gc) * d)), fd_c, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(float(np.sum(np.asarray(gm) * dm)), fd_m, rtol=1e-6, atol=1e-7)
