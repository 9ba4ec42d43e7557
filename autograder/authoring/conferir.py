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


def _br(x, casas=3):
    """Um número como no livro: vírgula decimal; 1e-06 vira 1·10⁻⁶."""
    texto = f"{float(x):.{casas}g}"
    if "e" in texto:
        mantissa, exp = texto.split("e")
        sup = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
        texto = ("" if mantissa == "1" else mantissa + "·") + "10" + str(int(exp)).translate(sup)
    return texto.replace(".", ",")


def _br_array(v):
    """Os primeiros valores de um array, com vírgula decimal e `;` entre eles."""
    return "[" + "; ".join(_br(x, 7) for x in _np.ravel(v)) + "]"


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
            f"(tolerância atol={_br(atol)}, rtol={_br(rtol)}).\n"
            f"  maior diferença: {_br(dif[pior])}"
            + (f" na posição {tuple(int(i) for i in pior)}\n" if dif.ndim else " (o resultado é um número só)\n")
            + f"  esperado{' (início)' if b.size > 6 else ''}: {_br_array(b.ravel()[:6])}\n"
            f"  obtido{' (início)' if a.size > 6 else ''}: {_br_array(a.ravel()[:6])}"
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
        if isinstance(e, NotImplementedError):
            falha = FalhaNoTeste(f"{nome}: a tarefa ainda não foi feita (a função ainda tem o "
                                 "`raise NotImplementedError`).")
        else:
            falha = FalhaNoTeste(f"{nome}: esperava {tipo.__name__}, veio {type(e).__name__}: {e}")
        falha.original = e
    else:
        raise FalhaNoTeste(f"{nome}: esperava {tipo.__name__}, mas a função não levantou erro.")
    raise falha from None


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
        if isinstance(e, NotImplementedError):
            falha = FalhaNoTeste(f"{nome}: a tarefa ainda não foi feita (a função ainda tem o "
                                 "`raise NotImplementedError`).")
        else:
            falha = FalhaNoTeste(f"{nome}: sua função levantou {type(e).__name__}: {e}")
        falha.original = e           # o erro do aluno, mostrado a partir da linha dele (_ao_erro)
    raise falha from None


# --- Observadores: regras sobre COMO a sua função calcula (não só o resultado) ---
import sys as _sys

from torch.utils._python_dispatch import TorchDispatchMode as _ModoDeDespacho


def _so_sinalizar(nome, ok, motivo):
    """Uma regra que só o kernel do aluno mede (a identidade de um buffer, `data_ptr()`).

    Na correção, o que o kernel do aluno informa não decide a nota (ele pode mentir): se a
    regra não vale, o notebook vai para a revisão do professor (flagged), com a evidência, e o
    teste segue. No seu Jupyter, a regra falha como um teste comum."""
    __tracebackhide__ = True
    if ok:
        return
    corretor = _sys.modules.get("_autograder_harness")
    if corretor is None:
        raise FalhaNoTeste(f"{nome}: {motivo}")
    corretor.flag(f"{nome}: {motivo} (medido no kernel do aluno; regra só sinalizada)")
    print(f"Aviso — {nome}: {motivo} O professor vai conferir.")


class _Observador(_ModoDeDespacho):
    """Observa as operações do torch feitas dentro de um bloco `with` (ou de uma chamada).

    Uma regra é uma subclasse com `ver(func, args, kwargs)` (pode levantar para
    proibir uma operação), `saida(func, out)`, `relatorio()` (um dicionário
    JSON) e `verificar(relatorio)` (AssertionError com a explicação). Os
    argumentos do construtor vão em `super().__init__(*args)`.

    No seu Jupyter ou no Colab, `with Regra(...):` observa o bloco e verifica
    na saída. Na correção, o bloco roda no kernel do corretor e cada chamada
    de função sua feita dentro dele é observada no seu kernel por uma
    instância nova da mesma regra; o relatório volta para o `verificar`."""

    @classmethod
    def _should_skip_dynamo(cls):
        # Sem o embrulho do torch.compile no __torch_dispatch__ (nada aqui é compilado): com ele, o
        # primeiro uso importaria o torch._dynamo e o sympy, ~3,7 s de CPU em cada kernel novo.
        return False

    @classmethod
    def _should_skip_dynamo(cls):
        # Sem isto, o torch embrulha o `__torch_dispatch__` abaixo num `_disable_dynamo`, que
        # importa o torch._dynamo (e o sympy) na primeira operação observada: ~1 s de CPU e
        # ~270 MiB de endereços em cada kernel que usa uma regra. As regras não rodam sob
        # torch.compile, e é só para ele que o embrulho serve.
        return False

    def __init__(self, *args):
        super().__init__()
        self._args = args
        self.operacoes = 0
        self._vistos = set()

    def argumentos(self):
        """Os argumentos do construtor que vão ao kernel do aluno (dados; sem textos de teste)."""
        return self._args

    def ver(self, func, args, kwargs):
        pass

    def saida(self, func, out):
        pass

    def relatorio(self):
        return {}

    def verificar(self, relatorio):
        pass

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.ver(func, args, kwargs)
        out = func(*args, **kwargs)
        self.operacoes += 1
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, _torch.Tensor):
                self._vistos.add(t.untyped_storage().data_ptr())
        self.saida(func, out)
        return out

    def iniciar(self):
        _ModoDeDespacho.__enter__(self)

    def parar(self):
        _ModoDeDespacho.__exit__(self, None, None, None)

    def relatorio_da_chamada(self, resultado, entradas):
        """O relatório e se os tensores do resultado saíram de operações observadas."""
        pilha, tensores = [resultado], []
        while pilha:
            x = pilha.pop()
            if isinstance(x, _torch.Tensor):
                tensores.append(x)
            elif isinstance(x, (tuple, list)):
                pilha.extend(x)
            elif isinstance(x, dict):
                pilha.extend(x.values())
        visto = all(t.numel() == 0 or t.untyped_storage().data_ptr() in self._vistos
                    or any(t is e for e in entradas) for t in tensores)
        return {"relatorio": self.relatorio(), "operacoes": self.operacoes, "resultado_visto": visto}

    def __enter__(self):
        corretor = _sys.modules.get("_autograder_harness")
        if corretor is not None:
            corretor.observe(self)
        else:
            self.iniciar()
        return self

    def __exit__(self, tipo, valor, tb):
        corretor = _sys.modules.get("_autograder_harness")
        if corretor is not None:
            corretor.unobserve(self)
            return False
        self.parar()
        if tipo is None:
            self.verificar(self.relatorio())
        return False


class _sem_atalhos(_Observador):  # noqa: N801 - usada como `with _sem_atalhos():` nos testes
    """Proíbe as softmax, log_softmax, logsumexp e atenções prontas do torch e o autograd."""

    PROIBIDAS = ("softmax", "logsumexp", "scaled_dot_product", "flash_attention", "efficient_attention",
                 "cudnn_attention")

    def __init__(self):
        super().__init__()
        self.usadas = []

    def ver(self, func, args, kwargs):
        nome = func.__name__.split(".")[0]
        if _torch._C._current_graph_task_id() != -1:
            nome = "autograd (backward)"
        elif not any(p in nome for p in self.PROIBIDAS):
            return
        if nome not in self.usadas:
            self.usadas.append(nome)
        raise AssertionError(self._mensagem(self.usadas))

    @staticmethod
    def _mensagem(usadas):
        return ("use a sua própria conta: a sua função usou " + ", ".join(f"`{u}`" for u in usadas)
                + " (softmax, log_softmax, logsumexp e atenção prontas do torch e o autograd estão "
                  "fora desta tarefa).")

    def relatorio(self):
        return {"usadas": list(self.usadas)}

    def verificar(self, relatorio):
        usadas = relatorio["usadas"]
        if not isinstance(usadas, list):
            raise TypeError("relatório malformado")
        if usadas:
            raise AssertionError(self._mensagem([str(u) for u in usadas]))


class _SemMatrizTxT(_Observador):
    """Falha se algum tensor criado tiver T x T elementos (ou mais) nas duas últimas dimensões."""

    def __init__(self, nome, T):
        super().__init__(nome, T)
        self.nome, self.T = nome, T
        self.maior, self.forma = 0, None

    def saida(self, func, out):
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, _torch.Tensor) and t.dim() >= 2 and t.shape[-1] * t.shape[-2] > self.maior:
                self.maior, self.forma = t.shape[-1] * t.shape[-2], list(t.shape)

    def argumentos(self):
        return ("", self.T)             # o nome do caso fica no corretor (pode ser de um teste oculto)

    def relatorio(self):
        return {"maior": self.maior, "forma": self.forma}

    def verificar(self, relatorio):
        maior, forma = int(relatorio["maior"]), relatorio["forma"]
        if maior >= self.T * self.T:
            raise AssertionError(
                f"{self.nome}: sua função criou um tensor de forma {tuple(forma)}, do tamanho da matriz "
                f"T x T inteira (T = {self.T}). A ideia é nunca formá-la: trabalhe bloco a bloco.")


class _SoBlocos(_Observador):
    """Falha se uma redução (máximo, soma, softmax...) ler de uma vez uma linha inteira de
    `n` posições (n > bloco): a linha tem de ser percorrida em blocos de `bloco`."""

    REDUCOES = ("amax", "amin", "max", "min", "sum", "mean", "prod", "logsumexp", "softmax", "norm",
                "var", "std", "cumsum", "cumprod", "argmax", "argmin", "sort", "topk", "nansum")

    def __init__(self, nome, n, bloco, total=None):
        super().__init__(nome, n, bloco, total)
        self.nome, self.n, self.bloco, self.total = nome, n, bloco, total
        self.vistas = []

    def saida(self, func, out):
        """Com `total` (os elementos da entrada inteira): juntar todos os blocos num tensor só
        (cat, stack, ...) é ler a linha inteira de uma vez, ainda que a redução venha depois."""
        if self.total is None or self.n <= self.bloco:
            return
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, _torch.Tensor) and t.numel() >= self.total:
                nome = "juntar os blocos (" + func.__name__.split(".")[0].lstrip("_") + ")"
                if nome not in self.vistas:
                    self.vistas.append(nome)

    def ver(self, func, args, kwargs):
        nome = func.__name__.split(".")[0].lstrip("_")
        if self.n <= self.bloco or not any(nome == r or nome.endswith("_" + r) for r in self.REDUCOES):
            return
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, _torch.Tensor) and a.dim() >= 1 and a.shape[-1] == self.n:
                if nome not in self.vistas:
                    self.vistas.append(nome)

    def argumentos(self):
        return ("", self.n, self.bloco, self.total)  # o nome do caso fica no corretor (pode ser de um teste oculto)

    def relatorio(self):
        return {"reducoes": list(self.vistas)}

    def verificar(self, relatorio):
        vistas = relatorio["reducoes"]
        if not isinstance(vistas, list):
            raise TypeError("relatório malformado")
        if vistas:
            raise AssertionError(
                f"{self.nome}: sua função calculou {', '.join(f'`{v}`' for v in map(str, vistas))} sobre uma "
                f"linha inteira ({self.n} posições) de uma vez; a ideia é percorrer a linha em blocos de "
                f"{self.bloco}, guardando só o estado (máximo e soma) entre um bloco e outro.")


def _conferir_ou_com_a_sua(nome, obtido, certo, com_a_sua, anterior, **tolerancias):
    """Confere `obtido` com `certo`. Se não bate e a sua função de uma tarefa anterior
    (`anterior`, o nome dela) erra nesta entrada, aceita também `com_a_sua()`: o mesmo cálculo
    montado aqui com ela. Um erro de uma tarefa custa os pontos só dela, não de novo aqui."""
    __tracebackhide__ = True
    try:
        conferir(nome, obtido, certo, **tolerancias)
        return
    except AssertionError as erro:
        primeiro = erro
    try:
        seu = com_a_sua()
    except Exception:  # noqa: BLE001 - a sua função anterior nem roda aqui: vale o gabarito
        raise primeiro from None
    try:
        conferir(nome, seu, certo, **tolerancias)
    except AssertionError:
        pass                     # a sua função anterior erra nesta entrada
    else:
        raise primeiro from None
    conferir(f"{nome}, com a sua {anterior}", obtido, seu, **tolerancias)
    print(f"{nome}: confere com a sua {anterior}, que ainda erra (veja aquela tarefa).")


def _semente_oculta(rotulo):
    """A semente de um teste oculto: estável para o mesmo rótulo e a mesma semente do aluno.

    Na correção, o corretor põe uma semente por aluno em AUTOGRADER_HIDDEN_SEED (no kernel
    dele); sem ela (no seu Jupyter), vale 0. Os testes visíveis usam sementes fixas."""
    import hashlib
    import os

    try:
        aluno = int(os.environ.get("AUTOGRADER_HIDDEN_SEED", "0"))
    except ValueError:
        aluno = 0
    texto = f"{rotulo}\x00{aluno}".encode("utf-8")
    return int.from_bytes(hashlib.sha256(texto).digest()[:6], "big")


def _sem_matriz_TxT(nome, T, f, *args, **kwargs):
    """Roda f e falha se algum tensor criado tiver T x T elementos nas duas últimas dimensões."""
    with _SemMatrizTxT(nome, T):
        return _chamar(nome, f, *args, **kwargs)


def _fonte(f):
    """O texto da definição de `f`: do notebook (na correção) ou do kernel (no seu Jupyter)."""
    corretor = _sys.modules.get("_autograder_harness")
    if corretor is not None:
        return corretor.source_of(f)
    import inspect                        # como na correção: a função e as funções suas que ela usa
    vistos, textos, pilha = set(), [], [f]
    while pilha:
        g = pilha.pop()
        if id(g) in vistos or not (inspect.isfunction(g) or inspect.isclass(g)):
            continue
        vistos.add(id(g))
        try:
            textos.append(inspect.getsource(g))
        except (OSError, TypeError):
            continue
        codigos = [getattr(g, "__code__", None)] + [m.__code__ for m in vars(g).values() if inspect.isfunction(m)]
        while codigos:
            c = codigos.pop()
            if c is None:
                continue
            codigos.extend(k for k in c.co_consts if inspect.iscode(k))
            pilha.extend(h for h in map(globals().get, c.co_names)
                         if (inspect.isfunction(h) and h.__globals__ is globals())
                         or (inspect.isclass(h) and h.__module__ == "__main__"))
    return "\n\n".join(textos)


def _fonte_de_nome(nome):
    """O texto do `def nome` das suas células, ou None se `nome` não é uma função sua."""
    corretor = _sys.modules.get("_autograder_harness")
    if corretor is not None:
        return corretor.sources.get(nome)
    import inspect
    g = globals().get(nome)
    if inspect.isfunction(g) and g.__globals__ is globals():      # definida no próprio notebook
        try:
            return inspect.getsource(g)
        except (OSError, TypeError):
            return None
    return None
