"""atencao.analysis contra o torch e contra fórmulas fechadas."""

import math

import numpy as np
import pytest
import torch

from atencao import analysis as an


@pytest.mark.parametrize("d", [1, 7, 64, 256])
def test_dot_products_of_standard_components_have_variance_d(d):
    n = min(40_000, 4_000_000 // d)  # ~4e6 números sorteados no máximo
    x = an.random_dot_products(d, n, np.random.default_rng(d))
    # Var(S) = d; a variância amostral tem desvio padrão sqrt((2d^2 + 6d) / n)
    # (E[S^4] = 3d^2 + 6d para S = soma de d produtos de normais independentes).
    sigma = math.sqrt((2 * d * d + 6 * d) / n)
    assert abs(x.var() - d) < 6 * sigma
    assert abs(x.mean()) < 6 * math.sqrt(d / n)


def test_product_of_two_normals_has_kurtosis_nine():
    # Para d = 1, S = x y: E[S^4] / E[S^2]^2 = 9 (uma normal teria 3).
    x = an.random_dot_products(1, 200_000, np.random.default_rng(0))
    assert abs((x**4).mean() / (x**2).mean() ** 2 - 9) < 1.5


@pytest.mark.parametrize("d", [1, 2, 16, 1024])
def test_unit_vectors_give_mean_square_one_over_d(d):
    n = min(40_000, 4_000_000 // d)  # ~4e6 números sorteados no máximo
    x = an.random_dot_products(d, n, np.random.default_rng(d), unit=True)
    assert np.all(np.abs(x) <= 1 + 1e-12)  # Cauchy-Schwarz
    # (u·v)^2 ~ Beta(1/2, (d-1)/2): média 1/d, variância 2(d-1) / (d^2 (d+2)).
    sigma = math.sqrt(2 * (d - 1) / (d * d * (d + 2)) / n)
    assert abs((x**2).mean() - 1 / d) < 6 * sigma + 1e-12


def test_dot_products_reject_bad_arguments():
    with pytest.raises(ValueError, match="inteiro positivo"):
        an.random_dot_products(0, 10, np.random.default_rng(0))
    with pytest.raises(TypeError, match="np.random.Generator"):
        an.random_dot_products(4, 10, 0)


def test_naive_softmax_overflows_where_log_of_max_is_passed():
    lim32 = math.log(np.finfo(np.float32).max)  # ~88,72
    ok = an.naive_softmax(np.array([lim32 - 1, 0.0], np.float32))
    assert np.isfinite(ok).all()
    bad = an.naive_softmax(np.array([lim32 + 1, 0.0], np.float32))
    assert np.isnan(bad[0])
    bad16 = an.naive_softmax(torch.tensor([12.0, 0.0], dtype=torch.float16))  # exp(12) > 65504
    assert torch.isnan(bad16[0])


@pytest.mark.parametrize("shape", [(1,), (5,), (3, 7), (2, 3, 11)])
def test_logsumexp_matches_torch(shape):
    x = np.random.default_rng(3).standard_normal(shape) * 300  # grandes de propósito
    ref = torch.logsumexp(torch.from_numpy(x), dim=-1).numpy()
    np.testing.assert_allclose(an.logsumexp(x), ref, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(an.logsumexp(torch.from_numpy(x)).numpy(), ref, rtol=1e-13, atol=1e-12)


def test_logsumexp_of_fully_masked_row_is_minus_inf():
    x = np.array([[-np.inf, -np.inf], [0.0, -np.inf]])
    out = an.logsumexp(x)
    assert out[0] == -np.inf and out[1] == 0.0
    t = an.logsumexp(torch.from_numpy(x))
    assert torch.equal(t, torch.logsumexp(torch.from_numpy(x), dim=-1))


def test_logsumexp_along_other_axis():
    x = np.random.default_rng(4).standard_normal((4, 6))
    ref = torch.logsumexp(torch.from_numpy(x), dim=0).numpy()
    np.testing.assert_allclose(an.logsumexp(x, axis=0), ref, rtol=1e-13)


def test_entropy_matches_torch_entr_and_limits():
    p = torch.softmax(torch.randn(5, 9, dtype=torch.float64), -1)
    ref = torch.special.entr(p).sum(-1)
    torch.testing.assert_close(an.entropy(p), ref)
    np.testing.assert_allclose(an.entropy(p.numpy()), ref.numpy(), rtol=1e-13)
    one_hot = np.array([0.0, 1.0, 0.0])
    assert an.entropy(one_hot) == 0.0  # 0 log 0 = 0, sem NaN
    np.testing.assert_allclose(an.entropy(np.full(8, 1 / 8)), math.log(8), rtol=1e-14)


@pytest.mark.parametrize("shape", [(1,), (4,), (3, 5), (2, 2, 6)])
def test_softmax_jacobian_matches_autograd(shape):
    z = torch.randn(shape, dtype=torch.float64) * 3
    J = an.softmax_jacobian(z)
    assert J.shape == (*shape, shape[-1])
    flat_z, flat_J = z.reshape(-1, shape[-1]), J.reshape(-1, shape[-1], shape[-1])
    for zi, Ji in zip(flat_z, flat_J):
        ref = torch.autograd.functional.jacobian(lambda t: torch.softmax(t, -1), zi)
        torch.testing.assert_close(Ji, ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(an.softmax_jacobian(z.numpy()), J.numpy(), rtol=1e-12, atol=1e-15)
    # Propriedades: simétrica, linhas somam zero (invariância a somar constante).
    torch.testing.assert_close(J, J.transpose(-1, -2))
    torch.testing.assert_close(J.sum(-1), torch.zeros(shape, dtype=torch.float64), atol=1e-15, rtol=0)


def test_softmax_jacobian_vanishes_when_saturated():
    # [8, 4, 0] (o exemplo do capítulo 2) já tem jacobiana pequena; 16x mais, quase zero.
    small = np.linalg.norm(an.softmax_jacobian(np.array([0.5, 0.25, 0.0])))
    sat = np.linalg.norm(an.softmax_jacobian(np.array([8.0, 4.0, 0.0])))
    very = np.linalg.norm(an.softmax_jacobian(np.array([128.0, 64.0, 0.0])))
    assert small > 5 * sat and very < 1e-20
