"""O lado do corretor do protocolo entre os dois kernels (roda no kernel do corretor).

O executor injeta este texto (depois do de codec.py) num módulo
`_autograder_harness` do kernel do corretor, que só executa células
travadas e de teste. Antes de cada célula de teste, `bind` põe no espaço de
nomes os nomes que o teste usa e que as células do aluno definiram: dados
viram objetos comuns (codec.decode) e o resto (funções, classes, objetos)
vira um `Remote`, cuja chamada manda os argumentos como dados ao kernel do
aluno e traz o resultado como dado.

Cada pedido (`protocol.Request`, com id sorteado) sai por `input()` com o
prefixo `protocol.PREFIX`: o executor (fora dos dois kernels) o recebe no canal
stdin, repassa ao kernel do aluno com prazo e limite de tamanho, e devolve a
resposta (`Relayed`, `Failure` ou, no meio, `Callback`) com o mesmo id. Um erro
do aluno volta como dado (nome do tipo e mensagem) e é levantado aqui como
`StudentError` (ou uma subclasse dela que também é o builtin de mesmo nome, como
ValueError, para `except ValueError` funcionar); nenhum outro nome de exceção
vem do aluno. Uma resposta corrompida, de outro id ou fora do formato: o corretor
não pôde julgar, o notebook vai para revisão (`flag`) e a chamada levanta
`StudentKernelFailure`, que não é erro do aluno (revisão L1).

Partes ocultas no fim do notebook: `park` guarda os nomes do teste depois da parte visível e
`unpark` os devolve antes da parte oculta (worker/deferred.py, revisão M1).

Observadores (`observe`/`unobserve`): a classe `_Observador` das células
travadas se registra aqui quando roda no corretor; cada chamada feita com
observadores ativos leva o nome da classe e os argumentos do construtor, e o
relatório que volta passa por `_check_reports` antes do `verificar` dela.
"""

import builtins as _builtins
import sys as _sys

try:            # no kernel, codec.py e protocol.py já foram executados neste mesmo módulo
    from .protocol import (Blame, Callback, Failure, Flag, Op, Proxy, RaisedError, Relayed, Reply, Request, parse,
                           prompt)
    from .codec import HARNESS, BadWire, Handle, NotData, decode, encode
except ImportError:
    pass

observers: list = []


class StudentError(Exception):
    """Erro levantado por código do aluno (no kernel do aluno)."""


class StudentKernelFailure(Exception):
    """O kernel do aluno não respondeu (tempo esgotado, morreu, resposta grande ou inválida)."""


_BUILTIN_ERRORS = ("ValueError", "TypeError", "IndexError", "KeyError", "AttributeError",
                   "NotImplementedError", "RuntimeError", "ZeroDivisionError", "AssertionError",
                   "ArithmeticError", "OverflowError", "LookupError", "MemoryError", "RecursionError",
                   "FloatingPointError", "NameError", "UnboundLocalError")
_classes: dict = {}


def _student_error(kind, message):
    if kind in _BUILTIN_ERRORS:
        cls = _classes.get(kind)
        if cls is None:
            cls = _classes[kind] = type(kind, (StudentError, getattr(_builtins, kind)),
                                        {"__module__": "corretor"})
        return cls(message)
    safe = "".join(c for c in kind if c.isalnum() or c == "_")[:60] or "?"
    return StudentError(f"{safe}: {message}")


def _cannot_judge(reason):
    """A resposta não pôde ser lida: revisão por uma pessoa, e a chamada falha sem culpar o
    aluno (`StudentKernelFailure` não é `ValueError`: não passa num `conferir_erro`, L1)."""
    flag(f"o corretor não pôde julgar uma chamada ao kernel do aluno: {reason}")
    return StudentKernelFailure(f"o corretor não pôde julgar esta chamada ({reason}); o notebook vai para revisão")


def _await(text, rid):
    """Lê o que o executor respondeu ao pedido `rid` (Relayed, Failure ou Callback)."""
    try:
        msg = parse(text, Relayed, Failure, Callback)
    except BadWire as e:
        raise _cannot_judge(f"resposta do executor fora do formato ({e})") from None
    if msg.id != rid:
        raise _cannot_judge("resposta de outro pedido")
    return msg


def request(req):
    """Manda um `Request` ao kernel do aluno (pelo executor) e devolve o `Reply` dele.

    Enquanto espera, pode receber `Callback`: o aluno chamando um objeto do corretor que
    recebeu como argumento (uma função de teste, um modelo); atende e continua esperando."""
    msg = _await(_builtins.input(prompt(req)), req.id)
    while isinstance(msg, Callback):
        msg = _await(_builtins.input(prompt(_serve_callback(msg.text))), req.id)
    if msg.output:
        _sys.stdout.write(msg.output)
        _sys.stdout.flush()
    if isinstance(msg, Failure):
        if msg.blame is Blame.GRADER:
            raise _cannot_judge(msg.reason)
        raise StudentKernelFailure(msg.reason)
    try:
        answer = parse(msg.text, Reply)
    except BadWire as e:
        raise _cannot_judge(f"resposta corrompida do kernel do aluno ({e})") from None
    if answer.id != req.id:
        raise _cannot_judge("o kernel do aluno respondeu a outro pedido")
    if answer.error is not None:
        raise _student_error(answer.error.type, answer.error.message)
    return answer


_writes = 0             # cópias de volta feitas (tensores, arrays e geradores do corretor alterados pelo aluno)
_local: dict = {}        # alças de objetos do corretor que o aluno recebeu (funções, modelos)
_local_ids: dict = {}


def _cb_call(obj, cb):
    return obj(*[_value(a) for a in cb.args], **{k: _value(v) for k, v in cb.kwargs.items()})


def _cb_attr(obj, cb):
    if not isinstance(cb.name, str) or cb.name.startswith("_"):
        raise AttributeError("atributo privado")      # nada de __globals__, __code__...
    return getattr(obj, cb.name)


def _cb_item(obj, cb):
    return obj[_value(cb.key)]


def _cb_iter(obj, cb):
    return list(obj)


def _cb_len(obj, cb):
    return len(obj)


# o que o aluno pode fazer com um objeto do corretor (o lado do aluno tem a sua tabela, student._OPS)
_CALLBACK_OPS = {Op.CALL: _cb_call, Op.ATTR: _cb_attr, Op.ITEM: _cb_item, Op.ITER: _cb_iter, Op.LEN: _cb_len}


def _serve_callback(text):
    """O aluno chamou um objeto do corretor: roda aqui, devolve um `Reply` com dados (de um
    erro, só o tipo: a mensagem pode ser de um teste oculto)."""
    rid = ""
    try:
        cb = parse(text, Request)
        rid = cb.id
        obj = _local[cb.target]
        serve = _CALLBACK_OPS.get(cb.op)
        if serve is None:
            raise BadWire("operação desconhecida")
        return Reply(id=rid, value=_encode_arg(serve(obj, cb)))
    except Exception as e:  # noqa: BLE001
        return Reply(id=rid, error=RaisedError(type=type(e).__name__, message="erro no objeto do corretor"))


def flag(reason):
    """Marca o notebook para revisão (flagged), com o motivo; não passa pelo aluno."""
    msg = Flag(reason=str(reason)[:500])
    try:
        if parse(_builtins.input(prompt(msg)), Reply).id == msg.id:
            return
    except BadWire:
        pass
    raise StudentKernelFailure("o executor não confirmou a marcação para revisão")


def _to_handle(obj) -> Handle:
    if isinstance(obj, Remote):
        return object.__getattribute__(obj, "_ag_handle")
    if isinstance(obj, type(_sys)):
        raise NotData("um módulo do corretor não pode ser enviado ao kernel do aluno")
    hid = _local_ids.get(id(obj))
    if hid is None:
        hid = _new_id()
        _local_ids[id(obj)] = hid
        _local[hid] = obj
    return Handle.of(hid, HARNESS, obj)


def _new_id():
    """Alça nova, sorteada: a mesma função de teste não tem o mesmo número em dois notebooks
    (nem na parte visível e na oculta), então o número não diz qual teste é (M3)."""
    import secrets
    while True:
        hid = secrets.randbits(52) + 1
        if hid not in _local:
            return hid


def _from_handle(h: Handle):
    if h.side == HARNESS:
        if h.id not in _local:
            raise BadWire("alça desconhecida")
        return _local[h.id]
    return Remote(h)


def _value(d):
    try:
        return decode(d, _from_handle)
    except BadWire as e:
        raise _cannot_judge(f"o kernel do aluno mandou um valor inválido ({e})") from None


def _encode_arg(v):
    return encode(v, _to_handle)


def _copy_back(target, new):
    global _writes
    _writes += 1          # o aluno escreveu num objeto do corretor: este kernel não serve a outro notebook
    torch = _sys.modules.get("torch")
    if torch is not None and isinstance(target, torch.Generator) and isinstance(new, torch.Generator):
        target.set_state(new.get_state())
        return
    if torch is not None and isinstance(target, torch.Tensor) and isinstance(new, torch.Tensor):
        if target.shape == new.shape:
            with torch.no_grad():
                target.copy_(new.to(target.dtype))
        return
    np = _sys.modules.get("numpy")
    if np is not None and isinstance(target, np.ndarray) and isinstance(new, np.ndarray) \
            and target.shape == new.shape:
        target[...] = new


def _check_reports(watchers, reports, value):
    """Relatórios dos observadores: um por observador, bem formados, coerentes; senão flagged."""
    if not isinstance(reports, list) or len(reports) != len(watchers):
        flag("o kernel do aluno não devolveu o relatório dos observadores")
        raise AssertionError("a verificação da execução da sua função não voltou completa.")
    for w, rep in zip(watchers, reports):
        name = type(w).__name__
        ok = isinstance(rep, dict) and isinstance(rep.get("relatorio"), dict) \
            and type(rep.get("operacoes")) is int and type(rep.get("resultado_visto")) is bool
        if not ok:
            flag(f"relatório malformado do observador {name}")
            raise AssertionError("a verificação da execução da sua função voltou malformada.")
        if not rep["resultado_visto"]:
            flag(f"{name}: o resultado da função não passou pelo observador (operações escondidas?)")
            raise AssertionError("o resultado da sua função não foi calculado à vista da verificação "
                                 "(não desligue nem contorne o modo de despacho do torch).")
        try:
            w.verificar(rep["relatorio"])
        except AssertionError:
            raise
        except Exception as e:  # noqa: BLE001 - relatório que o verificar não entende
            flag(f"relatório inconsistente do observador {name} ({type(e).__name__})")
            raise AssertionError("a verificação da execução da sua função voltou inconsistente.") from None


def _roots(x):
    """Identidade do armazenamento de um tensor ou array (visões do mesmo buffer têm a mesma)."""
    torch = _sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        try:
            return ("t", x.untyped_storage().data_ptr())
        except Exception:  # noqa: BLE001 - tensor sem armazenamento (meta, esparso)
            return ("o", id(x))
    np = _sys.modules.get("numpy")
    if np is not None and isinstance(x, np.ndarray):
        while isinstance(x.base, np.ndarray):
            x = x.base
        return ("a", id(x))
    return ("o", id(x))


def _seen_outside(frame):
    """Armazenamentos que o código acima de `frame` enxerga: o espaço de nomes do notebook
    (variáveis do teste) e as variáveis locais de cada quadro mais externo."""
    out, dicts = set(), [frame.f_globals]
    f = frame.f_back
    while f is not None:
        dicts.append(f.f_locals)
        f = f.f_back
    torch, np = _sys.modules.get("torch"), _sys.modules.get("numpy")
    kinds = tuple(t for t in (torch and torch.Tensor, torch and torch.Generator, np and np.ndarray) if t)
    for d in dicts:
        for v in list(d.values()):
            if isinstance(v, kinds):        # (nunca hasattr: um Remote perguntaria ao aluno)
                out.add(_roots(v))
    return out


def _may_copy_back(args, kwargs, frame):
    """Cópia de volta só para o que a semântica "no lugar" pede: um objeto que só o quadro
    que chamou o aluno enxerga (o buffer de saída que um lançador travado criou, como o `o`
    de `flash_forward`). Um tensor do teste (ou uma visão dele) nunca é reescrito pelo aluno:
    a referência calculada depois da chamada leria o que o aluno escreveu (revisão C3)."""
    seen = _seen_outside(frame)
    ok = {f"a{i}" for i, a in enumerate(args) if _roots(a) not in seen}
    return ok | {f"k{k}" for k, a in kwargs.items() if _roots(a) not in seen}


def call(hid, method, args, kwargs):
    watchers = list(observers)
    # o quadro de quem chamou (Remote.__call__ -> call): o teste ou uma função travada
    allowed = _may_copy_back(args, kwargs, _sys._getframe(2))
    req = Request(op=Op.CALL, target=hid, method=method, args=[_encode_arg(a) for a in args],
                  kwargs={str(k): _encode_arg(v) for k, v in kwargs.items()},
                  watchers=[[type(w).__name__, encode(tuple(w.argumentos()))] for w in watchers])
    answer = request(req)
    for key, enc in answer.changed.items():
        if key not in allowed:
            continue
        if key[:1] == "a" and key[1:].isdigit() and int(key[1:]) < len(args):
            _copy_back(args[int(key[1:])], _value(enc))
        elif key[:1] == "k" and key[1:] in kwargs:
            _copy_back(kwargs[key[1:]], _value(enc))
    value = _value(answer.value)
    if watchers:
        _check_reports(watchers, answer.reports, value)
    return value


class Remote(Proxy):
    """Uma função, classe ou objeto que mora no kernel do aluno."""

    __slots__ = ("_ag_bound",)

    def __init__(self, handle: Handle):
        super().__init__(handle)
        object.__setattr__(self, "_ag_bound", None)     # o nome do aluno a que `bind` o ligou

    def _ag_ask(self, op, **fields):
        return _value(request(Request(op=op, target=self._ag_handle.id, **fields)).value)

    def _ag_encode(self, value):
        return _encode_arg(value)

    def __call__(self, *args, **kwargs):
        # (chama `call` direto: ele olha o quadro de quem chamou este método)
        return call(object.__getattribute__(self, "_ag_handle").id, None, args, kwargs)

    def __setattr__(self, name, value):
        request(Request(op=Op.SETATTR, target=self._ag_handle.id, name=name, value=_encode_arg(value)))

    def __repr__(self):
        h = self._ag_handle
        kind = {"function": "função", "class": "classe"}.get(h.kind, "objeto")
        return f"<{kind} do aluno: {h.name}>"


class Unavailable:
    """Um nome do aluno que não pôde ser trazido (grande demais, tipo não transferível)."""

    def __init__(self, name, reason):
        self._ag_why = f"`{name}` não pôde ser lido do seu notebook: {reason}"

    def __getattr__(self, name):
        if name.startswith("__") or name.startswith("_repr_") or name.startswith("_ipython_"):
            raise AttributeError(name)
        raise AssertionError(self._ag_why)

    def __call__(self, *a, **k):
        raise AssertionError(self._ag_why)

    def __repr__(self):
        return f"<indisponível: {self._ag_why}>"


def bind(ns, candidates):
    """Põe em `ns` os nomes de `candidates` que as células do aluno definiram."""
    if not candidates:
        return
    # um pedido só: o aluno devolve os que ele definiu (sem módulos nem nomes do IPython)
    wanted = list(candidates)
    answer = request(Request(op=Op.GET, names=wanted))
    for n, enc in answer.values.items():
        if n in wanted:
            ns[n] = _value(enc)
            if isinstance(ns[n], Remote):
                object.__setattr__(ns[n], "_ag_bound", n)
    for n, why in answer.errors.items():
        if n in wanted:
            ns[n] = Unavailable(n, str(why)[:500])


_parked: dict = {}       # chave -> cópia do espaço de nomes de um teste, à espera da parte oculta


def park(key, ns):
    """Guarda uma cópia (rasa) do espaço de nomes `ns` logo depois da parte visível de um teste:
    a parte oculta roda no fim do notebook (worker/deferred.py) com os nomes de agora, mesmo que
    um teste ou uma célula travada depois os religue."""
    _parked[key] = dict(ns)


def unpark(key, ns):
    """Devolve a `ns` (o mesmo dicionário: as funções do teste o têm como `__globals__`) os
    nomes guardados por `park(key, ...)`."""
    saved = _parked.pop(key)
    for name in [n for n in ns if n not in saved]:
        del ns[name]
    ns.update(saved)


def observe(w):
    observers.append(w)


def unobserve(w):
    if w in observers:
        observers.remove(w)


sources: dict = {}      # nome -> texto do def/class nas células do aluno (lido do notebook pelo executor)


def source_of(f):
    """O texto da definição de `f` no notebook (não do kernel do aluno), para as regras de texto."""
    name = object.__getattribute__(f, "_ag_bound") if isinstance(f, Remote) else None
    if name is None or name not in sources:
        raise AssertionError("não encontrei no notebook a definição desta função (com `def`, numa célula "
                             "sua, sem ser redefinida depois); a verificação do código não pode ser feita.")
    return sources[name]


# ----------------------------------------------------------------------------- reaproveitamento (issue 12)
#
# O executor pode usar este kernel para o próximo notebook da mesma tarefa. Na partida,
# `snapshot()` guarda o estado global do processo num módulo à parte (`_autograder_base`,
# que sobrevive ao reset); depois de cada notebook, `reset_for_next` recusa o reaproveitamento
# se o aluno pode ter deixado algo aqui (ou se o processo mudou de um jeito que o reset não
# desfaz) e, senão, zera o IPython e devolve ao estado da partida o que é global ao processo.
# O executor então injeta um `_autograder_harness` novo e as células travadas rodam de novo.

_NUMPY_PRINT = {"edgeitems": 3, "threshold": 1000, "floatmode": "maxprec", "precision": 8,
                "suppress": False, "linewidth": 75, "nanstr": "nan", "infstr": "inf", "sign": "-",
                "formatter": None, "legacy": False}
_NUMPY_ERR = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}
_TORCH_PRINT = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def _files():
    """(caminho, tamanho, mtime) de tudo o que há na pasta do trabalho, no HOME e no /tmp."""
    import os
    out = []
    for root in sorted({os.getcwd(), os.environ.get("HOME", ""), "/tmp"} - {""}):
        for d, dirs, names in os.walk(root):
            dirs.sort()
            for n in sorted(names):
                p = os.path.join(d, n)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                out.append((p, st.st_size, st.st_mtime_ns))
    return out


def _processes():
    import os
    try:
        return sorted(int(d) for d in os.listdir("/proc") if d.isdigit())
    except OSError:
        return []


def _interpreter():
    """Ganchos do interpretador e do IPython (ids dos objetos): transformadores de entrada e
    da AST, exceções próprias, callbacks de eventos, `showtraceback` trocado, ganchos do sys.
    Um kernel em que algo disso mudou não serve a outro notebook (revisão C2)."""
    ip = None
    try:
        from IPython import get_ipython
        ip = get_ipython()
    except Exception:  # noqa: BLE001
        pass
    hooks = {"sys": [id(getattr(_sys, n, None)) for n in ("displayhook", "breakpointhook", "unraisablehook")]
             + [id(_sys.gettrace()), id(_sys.getprofile())]}
    if ip is not None:
        hooks["ipython"] = [
            [id(f) for f in ip.input_transformers_cleanup], [id(f) for f in ip.input_transformers_post],
            [id(f) for f in ip.ast_transformers], id(ip.custom_exceptions), id(getattr(ip, "CustomTB", None)),
            sorted(k for k in vars(ip) if k in ("showtraceback", "showsyntaxerror", "run_cell", "run_code",
                                                "run_ast_nodes", "transform_cell", "_showtraceback")),
            id(type(ip)), {k: [id(f) for f in v if not str(getattr(f, "__module__", "")).startswith(_OWN_CALLBACKS)]
                           for k, v in ip.events.callbacks.items()},
            [id(f) for f in getattr(ip.input_transformer_manager, "cleanup_transforms", [])],
            [id(f) for f in getattr(ip.input_transformer_manager, "line_transforms", [])],
            [id(f) for f in getattr(ip.input_transformer_manager, "token_transformers", [])]]
    return hooks


# atributos que o próprio interpretador religa a cada erro mostrado
# (e o ipykernel, a cada execução: excepthook, input e getpass; o pyplot, ao escolher o backend
# na primeira figura)
_VOLATILE = {"sys": ("last_type", "last_value", "last_traceback", "last_exc", "excepthook"),
             "builtins": ("input",), "getpass": ("getpass",),
             "matplotlib.pyplot": ("_REPL_DISPLAYHOOK", "_backend_mod", "draw_if_interactive")}
# callbacks de eventos que o pyplot e o backend inline registram sozinhos na primeira figura
_OWN_CALLBACKS = ("matplotlib.pyplot", "matplotlib_inline.")
# o que o próprio torch embrulha ao importar o torch._dynamo (um teste que usa o FlopCounterMode o
# importa): `torch._disable_dynamo` troca o atributo por um `inner` de torch/_compile.py cujo
# `__wrapped__` é o original. Só esse embrulho não conta como mudança (qualquer outro ainda recicla).
_DYNAMO_WRAPS = {"torch": ("manual_seed",)}


def _dynamo_wrap(name, key, value, original_id):
    code = getattr(value, "__code__", None)
    return (key in _DYNAMO_WRAPS.get(name, ()) and id(getattr(value, "__wrapped__", None)) == original_id
            and code is not None and code.co_filename.replace("\\", "/").endswith("torch/_compile.py"))


def _module_attributes():
    """Módulo -> {atributo: id do valor} de cada módulo importado (builtins inclusive)."""
    out = {}
    for name, mod in list(_sys.modules.items()):
        if name in ("__main__", "__mp_main__") or name.startswith("_autograder"):
            continue        # o espaço de nomes do notebook (zerado pelo reset) e o próprio corretor
        skip = _VOLATILE.get(name, ())
        try:
            # só os atributos públicos (os de builtins, todos): caches privados que a biblioteca
            # preenche sozinha (p.ex. `torch._opaque_base._FakeScriptObject_cls`) não contam
            out[name] = {k: id(v) for k, v in list(vars(mod).items())
                         if k not in skip and (name == "builtins" or not k.startswith("_"))}
        except TypeError:
            continue
    return out


def _changed_modules(base):
    """Módulos da partida com um atributo religado ou apagado, ou que sumiram de sys.modules
    (atributos novos não contam: um submódulo importado depois vira atributo do pacote)."""
    out = []
    for name, attrs in base.items():
        mod = _sys.modules.get(name)
        if mod is None:
            out.append(name)
            continue
        try:
            now = vars(mod)
        except TypeError:
            out.append(name)
            continue
        if any(k not in now or (id(now[k]) != v and not _dynamo_wrap(name, k, now[k], v))
               for k, v in attrs.items() if k not in _VOLATILE.get(name, ())):
            out.append(name)
    return out


def snapshot():
    """O estado global do processo logo depois da partida (antes do primeiro notebook)."""
    import os
    import warnings
    torch = _sys.modules.get("torch")
    return {"environ": dict(os.environ), "cwd": os.getcwd(), "path": list(_sys.path),
            "warnings": list(warnings.filters), "files": _files(), "processes": _processes(),
            "torch_threads": torch.get_num_threads() if torch is not None else None,
            "interpreter": _interpreter(), "modules": _module_attributes()}


def reuse_problems(base, max_rss_fraction):
    """Motivos (em português) para NÃO reaproveitar este kernel; lista vazia = pode."""
    import resource
    why = []
    if _local or _local_ids:
        why.append("o aluno recebeu alças de objetos do corretor")
    if _writes:
        why.append("o aluno alterou objetos do corretor (cópia de volta)")
    if observers:
        why.append("um observador ficou ativo")
    if _interpreter() != base["interpreter"]:
        why.append("ganchos do interpretador ou do IPython mudaram")
    changed = _changed_modules(base["modules"])
    if changed:
        why.append(f"atributos de módulos mudaram ({', '.join(sorted(changed)[:5])})")
    if _files() != base["files"]:
        why.append("arquivos mudaram na pasta do trabalho, no HOME ou no /tmp")
    if _processes() != base["processes"]:
        why.append(f"processos novos ({len(base['processes'])} na partida, {len(_processes())} agora)")
    # threads não entram: bibliotecas (p.ex. no cap. 10, depois do primeiro notebook) deixam
    # uma thread de trabalho parada, e nenhuma linha do aluno roda neste processo
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if limit > 0 and rss > max_rss_fraction * limit:
        why.append(f"memória: pico de {rss // 2**20} MiB, acima de {max_rss_fraction:g} do limite")
    torch = _sys.modules.get("torch")
    if torch is not None:
        from torch.overrides import _get_current_function_mode_stack
        from torch.utils._python_dispatch import _get_current_dispatch_mode_stack
        opts = {k: getattr(torch._tensor_str.PRINT_OPTS, k, None) for k in _TORCH_PRINT}
        checks = [(_get_current_dispatch_mode_stack() or _get_current_function_mode_stack(),
                   "modo de despacho do torch ativo"),
                  (not torch.is_grad_enabled(), "gradiente desligado"),
                  (torch.is_inference_mode_enabled(), "modo de inferência ligado"),
                  (torch.get_default_dtype() != torch.float32, "dtype padrão do torch mudou"),
                  (torch.is_anomaly_enabled(), "detecção de anomalia ligada"),
                  (torch.are_deterministic_algorithms_enabled(), "algoritmos determinísticos ligados"),
                  (base["torch_threads"] is not None and torch.get_num_threads() != base["torch_threads"],
                   "número de threads do torch mudou"),
                  (opts != _TORCH_PRINT, "opções de impressão do torch mudaram")]
        why += [text for bad, text in checks if bad]
    np = _sys.modules.get("numpy")
    if np is not None:
        opts = np.get_printoptions()
        if {k: opts.get(k) for k in _NUMPY_PRINT} != _NUMPY_PRINT or np.geterr() != _NUMPY_ERR:
            why.append("opções de impressão ou de erro do numpy mudaram")
    return why


def reset_for_next(base, max_rss_fraction):
    """Confere (`reuse_problems`: levanta RuntimeError com os motivos) e zera para o próximo notebook.

    Zera o IPython (`reset(new_session=True)`: espaço de nomes, In/Out, contador de execução)
    e devolve ao estado da partida o ambiente, a pasta atual, o sys.path e os filtros de aviso
    (o que também esquece os avisos "mostrados uma vez"); os geradores aleatórios globais
    recebem semente nova do sistema, como num processo novo (o torch 2.13 sorteia a semente
    inicial a cada processo; as células travadas fixam a sua)."""
    import gc
    import os
    import random
    import warnings

    from IPython import get_ipython
    why = reuse_problems(base, max_rss_fraction)
    if why:
        raise RuntimeError("; ".join(why))
    get_ipython().reset(new_session=True)
    os.environ.clear()
    os.environ.update(base["environ"])
    os.chdir(base["cwd"])
    _sys.path[:] = base["path"]
    warnings.filters[:] = base["warnings"]
    warnings._filters_mutated()
    random.seed()
    np = _sys.modules.get("numpy")
    if np is not None:
        np.random.seed()
    torch = _sys.modules.get("torch")
    if torch is not None:
        torch.seed()
    gc.collect()
