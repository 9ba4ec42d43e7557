# --- Funções de conferência (usadas pelos testes deste notebook) ---
import numpy as _np
import torch as _torch


def _como_array(x):
    if isinstance(x, _torch.Tensor):
        return x.detach().cpu().to(_torch.float64).numpy() if x.is_floating_point() else x.detach().cpu().numpy()
    return _np.asarray(x)


def conferir(nome, obtido, esperado, atol=1e-6, rtol=1e-5):
    """Compara `obtido` com `esperado` e explica em português o que deu errado."""
    if obtido is None:
        raise AssertionError(f"{nome}: sua função devolveu None. Faltou um `return`?")
    if isinstance(esperado, _torch.Tensor) and not isinstance(obtido, _torch.Tensor):
        raise AssertionError(f"{nome}: esperava um torch.Tensor, veio {type(obtido).__name__}.")
    if isinstance(esperado, _np.ndarray) and not isinstance(obtido, (_np.ndarray, _np.generic)):
        raise AssertionError(f"{nome}: esperava um np.ndarray, veio {type(obtido).__name__}.")
    a, b = _como_array(obtido), _como_array(esperado)
    if a.shape != b.shape:
        raise AssertionError(f"{nome}: forma errada. Esperava {b.shape}, veio {a.shape}.")
    if a.dtype == bool or b.dtype == bool:
        if not _np.array_equal(a, b):
            onde = _np.argwhere(a != b)
            raise AssertionError(
                f"{nome}: {len(onde)} posição(ões) diferentes; a primeira é {tuple(int(i) for i in onde[0])}: "
                f"esperava {b[tuple(onde[0])]}, veio {a[tuple(onde[0])]}."
            )
        return
    a, b = a.astype(_np.float64), b.astype(_np.float64)
    if not _np.array_equal(_np.isnan(a), _np.isnan(b)):
        raise AssertionError(
            f"{nome}: NaN onde não devia (ou faltou NaN). Posições com NaN: "
            f"esperava {int(_np.isnan(b).sum())}, veio {int(_np.isnan(a).sum())}."
        )
    ok = _np.isclose(a, b, atol=atol, rtol=rtol, equal_nan=True)
    if not ok.all():
        dif = _np.abs(_np.nan_to_num(a - b, nan=0.0, posinf=_np.inf, neginf=_np.inf))
        pior = _np.unravel_index(_np.argmax(dif), dif.shape) if dif.ndim else ()
        raise AssertionError(
            f"{nome}: valores diferentes em {int((~ok).sum())} de {ok.size} posições "
            f"(tolerância atol={atol}, rtol={rtol}).\n"
            f"  maior diferença: {float(dif[pior]):.3g} na posição {tuple(int(i) for i in pior)}\n"
            f"  esperado (início): {_np.array2string(b.ravel()[:6], precision=6)}\n"
            f"  obtido   (início): {_np.array2string(a.ravel()[:6], precision=6)}"
        )


def conferir_erro(nome, funcao, *args, tipo=ValueError, **kwargs):
    """Confere que `funcao(*args)` levanta `tipo` (uma entrada inválida deve dar erro claro)."""
    try:
        funcao(*args, **kwargs)
    except tipo:
        return
    except Exception as e:  # noqa: BLE001 - mostramos o que veio
        raise AssertionError(f"{nome}: esperava {tipo.__name__}, veio {type(e).__name__}: {e}") from None
    raise AssertionError(f"{nome}: esperava {tipo.__name__}, mas a função não levantou erro.")


def _tensor(nome, x):
    """Antes de usar a resposta: ela existe e é um torch.Tensor?"""
    if x is None:
        raise AssertionError(f"{nome}: sua função devolveu None. Faltou um `return`?")
    if not isinstance(x, _torch.Tensor):
        raise AssertionError(f"{nome}: esperava um torch.Tensor, veio {type(x).__name__}.")
    return x


def _forma(nome, x, forma):
    """A resposta é um torch.Tensor com a forma esperada?"""
    _tensor(nome, x)
    if tuple(x.shape) != tuple(forma):
        raise AssertionError(f"{nome}: forma errada. Esperava {tuple(forma)}, veio {tuple(x.shape)}.")
    return x


def _tipo(nome, x, dtype):
    """O tipo dos elementos (float16, float32, bool...) é o esperado?"""
    _tensor(nome, x)
    if x.dtype != dtype:
        raise AssertionError(f"{nome}: esperava elementos {dtype}, vieram {x.dtype}.")
    return x


def _chamar(nome, f, *args, **kwargs):
    """Chama a função do aluno; um erro inesperado vira uma falha que diz em qual caso foi."""
    try:
        return f(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - mostramos o que veio
        raise AssertionError(f"{nome}: sua função levantou {type(e).__name__}: {e}") from None
