"""As mensagens entre o kernel do corretor, o executor e o kernel do aluno, definidas uma vez.

Quem fala com quem (cada seta é um texto JSON com a chave "kind"; ver `Kind`):

    corretor --Request--> executor --Request--> aluno      (o teste usa uma função do aluno)
    corretor <-Relayed--- executor <-Reply----- aluno      (a resposta do aluno, em texto)
    corretor <-Failure--- executor                         (tempo, kernel morto, resposta recusada)
    corretor --Flag-----> executor                         (revisão por uma pessoa)
    aluno --Request--> executor --Callback--> corretor     (o aluno usa um objeto do corretor)
    aluno <-Reply----- executor <-Reply------ corretor

Cada `Request` leva um `id` sorteado (`new_id`), e a resposta (`Reply`, `Failure`,
`Relayed`, `Callback`) leva o mesmo: quem espera recusa uma resposta de outro id, então um
pedido aninhado (um objeto do aluno passado a um método do corretor durante um callback)
não dessincroniza o canal (revisão L2). Os valores dentro das mensagens (argumentos,
resultados) são os dicionários de codec.encode.

O executor passa adiante o texto da resposta do aluno sem decodificá-lo (`Relayed.text`);
só o kernel do corretor o lê. Todo texto é medido antes de ser lido (`parse`: no máximo
codec.MAX_BYTES, como em codec.loads), e todo campo é conferido contra o tipo declarado aqui:
uma mensagem fora do formato levanta `BadWire`, que quem recebe trata como "o corretor não
pôde julgar" (nunca como um `ValueError` da função do aluno: revisão L1).

`Proxy` é a base dos dois lados para um objeto do outro kernel (`student.HarnessObject`,
`harness.Remote`): cada uso vira um `Request` à alça dele.

Este arquivo roda nos dois kernels (injetado depois de codec.py, no mesmo módulo) e no
executor. Só usa a biblioteca padrão; sem `from __future__ import annotations` (os
dataclasses conferem os tipos pelos objetos das anotações).
"""

import dataclasses as _dc
import secrets as _secrets
import types as _types
import typing as _typing
from enum import Enum

try:            # no kernel, codec.py já foi executado neste mesmo módulo
    from .codec import MAX_BYTES, BadWire, Handle, dumps, loads
except ImportError:
    pass

PREFIX = "\x00autograder:"     # início de um `input()` que é do protocolo (e não do teclado)


class Kind(str, Enum):
    """O tipo de uma mensagem (a chave "kind")."""

    REQUEST = "request"      # um pedido a um objeto do outro kernel
    REPLY = "reply"          # a resposta a um pedido (do kernel que o atendeu)
    RELAYED = "relayed"      # executor -> corretor: o texto da resposta do aluno
    FAILURE = "failure"      # executor -> quem pediu: não houve resposta
    CALLBACK = "callback"    # executor -> corretor: o aluno usa um objeto do corretor
    FLAG = "flag"            # corretor -> executor: marcar o notebook para revisão


class Op(str, Enum):
    """A operação de um `Request`."""

    NAMES = "names"          # os nomes que as células do aluno definiram
    GET = "get"              # os valores de `names`
    CALL = "call"            # chamar `target` (ou o método `method` dele) com `args`/`kwargs`
    ATTR = "attr"            # ler o atributo `name`
    SETATTR = "setattr"      # escrever `value` no atributo `name`
    ITEM = "item"            # `target[key]`
    ITER = "iter"            # `list(target)`
    LEN = "len"              # `len(target)`


class Blame(str, Enum):
    """De quem é uma `Failure`."""

    STUDENT = "student"      # tempo estourado, kernel morto, resposta grande demais: o teste falha
    GRADER = "grader"        # o corretor não pôde julgar (resposta corrompida, id trocado): revisão


def new_id() -> str:
    """Um id de pedido sorteado (não dá para adivinhar o do próximo)."""
    return _secrets.token_hex(8)


@_dc.dataclass
class RaisedError:
    """O código do outro lado levantou: o nome do tipo e a mensagem."""

    type: str
    message: str


@_dc.dataclass
class Request:
    op: Op
    target: _typing.Optional[int] = None          # alça do objeto (None em NAMES e GET)
    method: _typing.Optional[str] = None          # CALL: o método de `target`
    name: _typing.Optional[str] = None            # ATTR, SETATTR
    args: list = _dc.field(default_factory=list)  # CALL: valores codificados
    kwargs: _typing.Dict[str, dict] = _dc.field(default_factory=dict)
    key: _typing.Optional[dict] = None            # ITEM (codificado)
    value: _typing.Optional[dict] = None          # SETATTR (codificado)
    names: _typing.List[str] = _dc.field(default_factory=list)         # GET
    watchers: list = _dc.field(default_factory=list)  # CALL: [classe do observador, argumentos codificados]
    id: str = _dc.field(default_factory=new_id)


@_dc.dataclass
class Reply:
    id: str
    value: _typing.Optional[dict] = None          # o resultado (codificado)
    changed: _typing.Dict[str, dict] = _dc.field(default_factory=dict)   # CALL: argumentos alterados
    reports: list = _dc.field(default_factory=list)                      # CALL: relatórios dos observadores
    names: _typing.Dict[str, str] = _dc.field(default_factory=dict)      # NAMES: nome -> "value"/"module"
    values: _typing.Dict[str, dict] = _dc.field(default_factory=dict)    # GET: nome -> valor codificado
    errors: _typing.Dict[str, str] = _dc.field(default_factory=dict)     # GET: nome -> motivo
    error: _typing.Optional[RaisedError] = None   # o código chamado levantou


@_dc.dataclass
class Relayed:
    id: str
    text: str                 # o texto do `Reply` do aluno (lido só no kernel do corretor)
    output: str = ""          # o que a função do aluno imprimiu (limitado)


@_dc.dataclass
class Failure:
    id: str
    reason: str               # em português, para quem lê o teste
    blame: Blame = Blame.STUDENT
    output: str = ""


@_dc.dataclass
class Callback:
    id: str                   # o pedido do corretor em espera
    text: str                 # o texto do `Request` do aluno (lido só no kernel do corretor)


@_dc.dataclass
class Flag:
    reason: str
    id: str = _dc.field(default_factory=new_id)


@_dc.dataclass
class Envelope:
    """O que o kernel do aluno deixa para o executor ler (`user_expressions`)."""

    text: str                 # o texto de um `Reply`
    raised: _typing.Optional[str] = None   # o tipo do erro da função do aluno (MemoryError: crashed)


_CLASSES = {Kind.REQUEST: Request, Kind.REPLY: Reply, Kind.RELAYED: Relayed, Kind.FAILURE: Failure,
            Kind.CALLBACK: Callback, Kind.FLAG: Flag}
_KINDS = {cls: kind for kind, cls in _CLASSES.items()}


def _fits(value, tp) -> bool:
    """`value` (vindo do JSON) tem o tipo `tp` (anotação de um campo)?"""
    origin, args = _typing.get_origin(tp), _typing.get_args(tp)
    if origin is _typing.Union or origin is _types.UnionType:
        return any(_fits(value, a) for a in args)
    if tp is type(None):
        return value is None
    if tp is list or origin is list:
        return type(value) is list and (not args or all(_fits(v, args[0]) for v in value))
    if tp is dict or origin is dict:
        return type(value) is dict and all(type(k) is str for k in value) \
            and (not args or all(_fits(v, args[1]) for v in value.values()))
    if isinstance(tp, type) and issubclass(tp, Enum):
        return type(value) is str and value in {m.value for m in tp}
    if _dc.is_dataclass(tp):
        return type(value) is dict
    return type(value) is tp


def from_dict(cls, d):
    """Constrói a mensagem `cls` de um dicionário, conferindo cada campo; senão `BadWire`."""
    if type(d) is not dict:
        raise BadWire(f"{cls.__name__}: não é um objeto")
    unknown = set(d) - {f.name for f in _dc.fields(cls)} - {"kind"}
    if unknown:
        raise BadWire(f"{cls.__name__}: campos desconhecidos {sorted(unknown)[:5]}")
    out = {}
    for f in _dc.fields(cls):
        if f.name not in d:
            if f.default is _dc.MISSING and f.default_factory is _dc.MISSING:
                raise BadWire(f"{cls.__name__}: falta o campo {f.name!r}")
            continue
        v = d[f.name]
        if not _fits(v, f.type):
            raise BadWire(f"{cls.__name__}: campo {f.name!r} inválido")
        inner = [a for a in (_typing.get_args(f.type) or (f.type,)) if _dc.is_dataclass(a)]
        if inner and v is not None:
            v = from_dict(inner[0], v)
        elif isinstance(f.type, type) and issubclass(f.type, Enum):
            v = f.type(v)
        out[f.name] = v
    return cls(**out)


def to_text(msg) -> str:
    """Mensagem -> texto JSON (no máximo codec.MAX_BYTES: senão `NotData`)."""
    if isinstance(msg, Envelope):
        return dumps(_dc.asdict(msg))
    return dumps({"kind": _KINDS[type(msg)].value, **_dc.asdict(msg)})


def parse(text, *expected):
    """Texto -> uma das mensagens `expected` (classes). Mede antes de ler (codec.loads) e
    confere o tipo e os campos; qualquer desvio levanta `BadWire`."""
    d = loads(text)
    if type(d) is not dict or type(d.get("kind")) is not str:
        raise BadWire("mensagem sem tipo")
    cls = {k.value: c for k, c in _CLASSES.items()}.get(d["kind"])
    if cls is None or cls not in expected:
        raise BadWire(f"mensagem inesperada ({str(d['kind'])[:20]!r}; esperava "
                      f"{', '.join(c.__name__ for c in expected)})")
    return from_dict(cls, d)


class Proxy:
    """Um objeto do outro kernel visto daqui (pela `Handle` dele): chamar, ler um atributo, um
    item, iterar e medir viram um `Request` ao dono, e o resultado volta como dado.

    Cada lado diz como o pedido sai e como a resposta é lida (`_ag_ask`) e como um argumento
    vira dado ou alça (`_ag_encode`). Nomes internos começam com `_ag_`, e os que o Python e o
    IPython procuram sozinhos (`__x__`, `_repr_*`, `_ipython_*`) nunca viram pedido."""

    __slots__ = ("_ag_handle",)

    def __init__(self, handle: Handle):
        object.__setattr__(self, "_ag_handle", handle)

    def _ag_ask(self, op: Op, **fields):
        """Manda `Request(op, target=<esta alça>, **fields)` ao dono e devolve o valor decodificado."""
        raise NotImplementedError

    def _ag_encode(self, value) -> dict:
        raise NotImplementedError

    def __call__(self, *args, **kwargs):
        return self._ag_ask(Op.CALL, args=[self._ag_encode(a) for a in args],
                            kwargs={str(k): self._ag_encode(v) for k, v in kwargs.items()})

    def __getattr__(self, name):
        if name.startswith(("__", "_repr_", "_ipython_")):
            raise AttributeError(name)
        return self._ag_ask(Op.ATTR, name=name)

    def __getitem__(self, key):
        return self._ag_ask(Op.ITEM, key=self._ag_encode(key))

    def __iter__(self):
        return iter(self._ag_ask(Op.ITER))

    def __len__(self):
        return self._ag_ask(Op.LEN)


def prompt(msg) -> str:
    """O texto de um `input()` do protocolo."""
    return PREFIX + to_text(msg)


def unprompt(text):
    """O texto depois de PREFIX, ou None se `text` não é do protocolo (ou passa do limite)."""
    if not isinstance(text, str) or not text.startswith(PREFIX) or len(text) > MAX_BYTES + len(PREFIX):
        return None
    return text[len(PREFIX):]
