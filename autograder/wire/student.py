"""O lado do aluno do protocolo entre os dois kernels (roda no kernel do aluno).

O executor injeta este texto (depois do de codec.py) num módulo
`_autograder_student` do kernel do aluno, antes da primeira célula. Nenhum
texto de teste chega aqui: só pedidos com dados (os argumentos de uma
chamada, o nome de um observador e os argumentos do construtor dele).

Cada pedido é uma execução silenciosa `_autograder_student.serve(TEXTO)` (um
`protocol.Request`); a resposta (`protocol.Reply`, com o mesmo id) fica em
`_autograder_student.reply` e o executor a lê por `user_expressions` (um
`protocol.Envelope` em JSON, nunca pickle). Tudo aqui pode ser adulterado pelo
aluno, que é dono deste processo: o kernel do corretor trata cada resposta
como dado não confiável (protocol.parse, codec.decode) e um relatório de
observador estranho como motivo de revisão (`flagged`).
"""

import re as _re
import sys as _sys

from IPython import get_ipython as _get_ipython

try:            # no kernel, codec.py e protocol.py já foram executados neste mesmo módulo
    from .protocol import Envelope, Failure, Op, Proxy, RaisedError, Reply, Request, parse, prompt, to_text
    from .codec import HARNESS, MAX_ITEMS, STUDENT, BadWire, Handle, NotData, decode, encode
except ImportError:
    pass

_NS = _get_ipython().user_ns if _get_ipython() is not None else {}
_handles: dict = {}       # id da alça -> objeto do aluno (mantido vivo)
_by_obj: dict = {}        # id(objeto) -> id da alça
_base: dict = {}          # nomes definidos pelas células travadas -> objeto (classes dos observadores)
_SKIP = {"In", "Out", "get_ipython", "exit", "quit", "_ih", "_oh", "_dh"}
_HISTORY = _re.compile(r"_+$|_i+\d*$|_\d+$")
reply = None


class _Reply:
    """O que o executor lê em user_expressions (a representação JSON de um `Envelope`)."""

    def __init__(self, text, raised=None):
        self.text, self.raised = text, raised

    def _repr_json_(self):
        return vars(Envelope(text=self.text, raised=self.raised))

    def __repr__(self):
        return "<resposta ao corretor>"


def mark_base(names):
    """Guarda os objetos que as células travadas definiram (chamado depois de cada uma)."""
    for n in names:
        if n in _NS:
            _base[n] = _NS[n]


def _short(obj):
    try:
        name = getattr(obj, "__qualname__", None) or type(obj).__name__
        return str(name)[:80]
    except Exception:  # noqa: BLE001
        return "?"


class HarnessObject(Proxy):
    """Um objeto do corretor recebido como argumento (função de teste, modelo): cada uso é um
    pedido ao corretor, que responde com dados."""

    __slots__ = ()

    def _ag_ask(self, op, **fields):
        import builtins
        req = Request(op=op, target=object.__getattribute__(self, "_ag_handle").id, **fields)
        try:
            answer = parse(builtins.input(prompt(req)), Reply, Failure)
        except BadWire:
            answer = None
        if not isinstance(answer, Reply) or answer.id != req.id:
            raise RuntimeError("o corretor não respondeu")
        if answer.error is not None:
            raise RuntimeError(f"erro no objeto do corretor ({answer.error.type[:60]})")
        return _dec(answer.value)

    def _ag_encode(self, value):
        return _enc(value)


def _to_handle(obj) -> Handle:
    if isinstance(obj, HarnessObject):
        return object.__getattribute__(obj, "_ag_handle")
    if isinstance(obj, type(_sys)):
        raise NotData("um módulo não pode ser enviado ao corretor")
    hid = _by_obj.get(id(obj))
    if hid is None:
        hid = len(_handles) + 1
        _handles[hid] = obj
        _by_obj[id(obj)] = hid
    return Handle.of(hid, STUDENT, obj, _short(obj))


def _own(hid):
    """O objeto do aluno de uma alça deste kernel."""
    if hid not in _handles:
        raise BadWire("alça desconhecida")
    return _handles[hid]


def _from_handle(h: Handle):
    return HarnessObject(h) if h.side == HARNESS else _own(h.id)


def _enc(v):
    return encode(v, _to_handle)


def _dec(d):
    return decode(d, _from_handle)


def _hidden_name(k):
    """Nomes do IPython, do corretor e do histórico: não são do aluno."""
    return k in _SKIP or k.startswith("_autograder") or bool(_HISTORY.match(k))


def _names(req):
    out = {}
    for k, v in list(_NS.items()):
        if _hidden_name(k):
            continue
        out[k] = "module" if isinstance(v, type(_sys)) else "value"
    return {"names": out}


def _get(req):
    """Os valores dos nomes pedidos que o aluno definiu (os que `_names` diria "value")."""
    values, errors = {}, {}
    for n in req.names:
        if n not in _NS or _hidden_name(n) or isinstance(_NS[n], type(_sys)):
            continue
        try:
            values[n] = _enc(_NS[n])
        except Exception as e:  # noqa: BLE001 - o corretor recebe o motivo
            errors[n] = f"{type(e).__name__}: {e}"[:500]
    return {"values": values, "errors": errors}


def _copy(x):
    torch = _sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Generator):
        return x.get_state()
    if torch is not None and isinstance(x, torch.Tensor):
        with torch._C.DisableTorchFunctionSubclass():
            return x.detach().clone()
    np = _sys.modules.get("numpy")
    if np is not None and isinstance(x, np.ndarray):
        return np.array(x, copy=True)
    return None


def _same(a, b):
    torch = _sys.modules.get("torch")
    if torch is not None and isinstance(b, torch.Generator):
        return bool(torch.equal(a, b.get_state()))
    if torch is not None and isinstance(b, torch.Tensor):
        with torch._C.DisableTorchFunctionSubclass():
            return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a.detach(), b))
    np = _sys.modules.get("numpy")
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


def _target(req):
    if req.target is None:
        raise BadWire("pedido sem alvo")
    return _own(req.target)


def _call(req):
    f = _target(req)
    if req.method is not None:
        f = getattr(f, req.method)
    args = [_dec(a) for a in req.args]
    kwargs = {k: _dec(v) for k, v in req.kwargs.items()}
    watchers = []
    for item in req.watchers:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
            raise BadWire("observador malformado")
        cls = _base.get(item[0])
        if cls is None:
            raise BadWire(f"observador desconhecido: {item[0]!r:.60}")
        watchers.append(cls(*decode(item[1])))
    inputs = list(args) + list(kwargs.values())
    before = {f"a{i}": (a, _copy(a)) for i, a in enumerate(args)}
    before.update({f"k{k}": (a, _copy(a)) for k, a in kwargs.items()})
    started = []
    try:
        for w in watchers:
            w.iniciar()
            started.append(w)
        result = f(*args, **kwargs)
    finally:
        for w in reversed(started):
            w.parar()
    reports = [w.relatorio_da_chamada(result, inputs) for w in watchers]
    changed = {k: _enc(a) for k, (a, old) in before.items() if old is not None and not _same(old, a)}
    return {"value": _enc(result), "changed": changed, "reports": reports}


def _attr(req):
    return {"value": _enc(getattr(_target(req), str(req.name)))}


def _setattr(req):
    setattr(_target(req), str(req.name), _dec(req.value))
    return {}


def _item(req):
    return {"value": _enc(_target(req)[_dec(req.key)])}


def _iterate(req):
    out = []
    for x in _target(req):
        out.append(x)
        if len(out) > MAX_ITEMS:
            raise NotData(f"mais de {MAX_ITEMS} elementos")
    return {"value": _enc(out)}


def _len(req):
    return {"value": _enc(int(len(_target(req))))}


_OPS = {Op.NAMES: _names, Op.GET: _get, Op.CALL: _call, Op.ATTR: _attr, Op.SETATTR: _setattr,
        Op.ITEM: _item, Op.ITER: _iterate, Op.LEN: _len}


def serve(text):
    """Atende um pedido do corretor; a resposta (com o id do pedido) fica em `reply`."""
    global reply
    reply = None
    rid = ""
    try:
        req = parse(text, Request)
        rid = req.id
        reply = _Reply(to_text(Reply(id=rid, **_OPS[req.op](req))))
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # noqa: BLE001 - o erro do aluno vai como dado
        e.__traceback__ = None        # solta os quadros da função (uma bomba de memória libera tudo)
        try:
            msg = str(e)[:4000]
        except Exception:  # noqa: BLE001
            msg = "(mensagem ilegível)"
        kind = type(e).__name__[:80]
        reply = _Reply(to_text(Reply(id=rid, error=RaisedError(type=kind, message=msg))), kind)
