# --- Funções de conferência (usadas pelos testes deste notebook) ---
import numpy as _np
import torch as _torch



def _sem_quadros_ocultos(tb):
    """O traceback `tb` sem os quadros marcados com `__tracebackhide__` (os das funções abaixo)."""
    import types

    quadros = []
    while tb is not None:  # (o contextlib é o encanamento dos `with` de conferência)
        f = tb.tb_frame
        if not f.f_locals.get("__tracebackhide__") and f.f_globals.get("__name__") != "contextlib":
            quadros.append(tb)
        tb = tb.tb_next
    novo = None
    for t in reversed(quadros):
        novo = types.TracebackType(novo, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return novo


class FalhaNoTeste(AssertionError):
    """Um teste não passou. No Jupyter, o traceback mostra a célula de testes e o código
    do aluno, sem os quadros destas funções de conferência (`__tracebackhide__ = True`:
    o IPython só esconde quadros do meio, por isso o último, o `raise` daqui, sai
    por `_render_traceback_`)."""

    def _render_traceback_(self):
        from IPython import get_ipython

        tb = get_ipython().InteractiveTB
        try:
            return tb.structured_traceback(type(self), self, _sem_quadros_ocultos(self.__traceback__))
        except Exception:  # noqa: BLE001 - nunca deixar a mensagem do teste sumir
            return tb.structured_traceback(type(self), self, self.__traceback__)


def _como_array(x):
    if isinstance(x, _torch.Tensor):
        return x.detach().cpu().to(_torch.float64).numpy() if x.is_floating_point() else x.detach().cpu().numpy()
    return _np.asarray(x)


def conferir(nome, obtido, esperado, atol=1e-6, rtol=1e-5):
    """Compara `obtido` com `esperado` e explica em português o que deu errado."""
    __tracebackhide__ = True
    if obtido is None:
        raise FalhaNoTeste(f"{nome}: sua função devolveu None. Faltou um `return`?")
    if isinstance(esperado, _torch.Tensor) and not isinstance(obtido, _torch.Tensor):
        raise FalhaNoTeste(f"{nome}: esperava um torch.Tensor, veio {type(obtido).__name__}.")
    if isinstance(esperado, _np.ndarray) and not isinstance(obtido, (_np.ndarray, _np.generic)):
        raise FalhaNoTeste(f"{nome}: esperava um np.ndarray, veio {type(obtido).__name__}.")
    a, b = _como_array(obtido), _como_array(esperado)
    if a.shape != b.shape:
        raise FalhaNoTeste(f"{nome}: forma errada. Esperava {b.shape}, veio {a.shape}.")
    if a.dtype == bool or b.dtype == bool:
        if not _np.array_equal(a, b):
            onde = _np.argwhere(a != b)
            raise FalhaNoTeste(
                f"{nome}: {len(onde)} posição(ões) diferentes; a primeira é {tuple(int(i) for i in onde[0])}: "
                f"esperava {b[tuple(onde[0])]}, veio {a[tuple(onde[0])]}."
            )
        return
    a, b = a.astype(_np.float64), b.astype(_np.float64)
    if not _np.array_equal(_np.isnan(a), _np.isnan(b)):
        raise FalhaNoTeste(
            f"{nome}: NaN onde não devia (ou faltou NaN). Posições com NaN: "
            f"esperava {int(_np.isnan(b).sum())}, veio {int(_np.isnan(a).sum())}."
        )
    ok = _np.isclose(a, b, atol=atol, rtol=rtol, equal_nan=True)
    if not ok.all():
        dif = _np.abs(_np.nan_to_num(a - b, nan=0.0, posinf=_np.inf, neginf=_np.inf))
        pior = _np.unravel_index(_np.argmax(dif), dif.shape) if dif.ndim else ()
        raise FalhaNoTeste(
            f"{nome}: valores diferentes em {int((~ok).sum())} de {ok.size} posições "
            f"(tolerância atol={atol}, rtol={rtol}).\n"
            f"  maior diferença: {float(dif[pior]):.3g} na posição {tuple(int(i) for i in pior)}\n"
            f"  esperado (início): {_np.array2string(b.ravel()[:6], precision=6)}\n"
            f"  obtido   (início): {_np.array2string(a.ravel()[:6], precision=6)}"
        )


def conferir_erro(nome, funcao, *args, tipo=ValueError, **kwargs):
    """Confere que `funcao(*args)` levanta `tipo` (uma entrada inválida deve dar erro claro).

    Devolve a exceção levantada, para o teste conferir também a mensagem.
    """
    __tracebackhide__ = True
    try:
        funcao(*args, **kwargs)
    except tipo as e:
        return e
    except Exception as e:  # noqa: BLE001 - mostramos o que veio
        raise FalhaNoTeste(f"{nome}: esperava {tipo.__name__}, veio {type(e).__name__}: {e}") from e
    raise FalhaNoTeste(f"{nome}: esperava {tipo.__name__}, mas a função não levantou erro.")


def _tensor(nome, x):
    """Antes de usar a resposta: ela existe e é um torch.Tensor?"""
    __tracebackhide__ = True
    if x is None:
        raise FalhaNoTeste(f"{nome}: sua função devolveu None. Faltou um `return`?")
    if not isinstance(x, _torch.Tensor):
        raise FalhaNoTeste(f"{nome}: esperava um torch.Tensor, veio {type(x).__name__}.")
    return x


def _forma(nome, x, forma):
    """A resposta é um torch.Tensor com a forma esperada?"""
    __tracebackhide__ = True
    _tensor(nome, x)
    if tuple(x.shape) != tuple(forma):
        raise FalhaNoTeste(f"{nome}: forma errada. Esperava {tuple(forma)}, veio {tuple(x.shape)}.")
    return x


def _tipo(nome, x, dtype):
    """O tipo dos elementos (float16, float32, bool...) é o esperado?"""
    __tracebackhide__ = True
    _tensor(nome, x)
    if x.dtype != dtype:
        raise FalhaNoTeste(f"{nome}: esperava elementos {dtype}, vieram {x.dtype}.")
    return x


def _chamar(nome, f, *args, **kwargs):
    """Chama a função do aluno; um erro inesperado vira uma falha que diz em qual caso foi
    (o erro original vem junto, com o traceback a partir do código do aluno)."""
    __tracebackhide__ = True
    try:
        return f(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - mostramos o que veio
        raise FalhaNoTeste(f"{nome}: sua função levantou {type(e).__name__}: {e}") from e
