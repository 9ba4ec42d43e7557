"""Os dados que atravessam entre o kernel do aluno e o kernel do corretor.

Só passam dados: None, bool, int, float, complex, str, tensores do torch,
arrays do NumPy (e escalares do NumPy), `torch.dtype`, e tuplas, listas e
dicionários deles. Nada de pickle. Cada valor vira um dicionário JSON com a
chave "t" (o tipo); tensores e arrays levam os bytes em base64, com o dtype
e a forma, e do outro lado são reconstruídos como objetos comuns do torch e
do NumPy (nunca a subclasse que o aluno tenha definido: um tensor cujas
comparações mentem chega ao corretor como um tensor comum).

O que não é dado (funções, classes, objetos do aluno) vira uma *alça*
(`Handle`: o número do objeto no kernel que o guarda, e qual kernel é esse): quem
codifica decide, por `to_handle`, e quem decodifica, por `from_handle`.

Este arquivo roda nos dois kernels: o executor manda o texto dele (com
protocol.py, as mensagens, e student.py ou harness.py) na inicialização. Por isso só usa a
biblioteca padrão no topo e importa numpy e torch só quando precisa.
"""

import base64
import json
import math
from dataclasses import dataclass

MAX_BYTES = 64 * 1024 * 1024     # tamanho máximo de uma mensagem (JSON) entre os kernels
MAX_DEPTH = 32                   # aninhamento máximo de tuplas, listas e dicionários
MAX_ITEMS = 100_000              # elementos de uma tupla, lista ou dicionário

_TORCH_DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128", "uint8", "int8",
                 "int16", "int32", "int64", "bool")


STUDENT = "student"      # o lado de uma alça: o kernel que guarda o objeto
HARNESS = "harness"


class NotData(TypeError):
    """O valor não é um dado transferível (e não há como fazer dele uma alça)."""


class BadWire(ValueError):
    """A mensagem recebida não segue o formato (veio corrompida ou forjada)."""


@dataclass(frozen=True)
class Handle:
    """Uma alça: um objeto que não é dado (função, classe, objeto) e fica no kernel `side`,
    que o conhece pelo número `id`; o outro kernel o usa por um proxy (`protocol.Proxy`)."""

    id: int
    side: str = STUDENT
    kind: str = "object"     # "function", "class" ou "object" (para as mensagens)
    name: str = "?"

    @classmethod
    def of(cls, hid: int, side: str, obj, name: str = "?") -> "Handle":
        kind = "class" if isinstance(obj, type) else ("function" if callable(obj) else "object")
        return cls(hid, side, kind, name)

    def encode(self) -> dict:
        return {"t": "handle", "id": self.id, "side": self.side, "kind": self.kind, "name": self.name}

    @classmethod
    def decode(cls, d) -> "Handle":
        """Do JSON (de outro kernel, não confiável): o número é um int e o lado, um dos dois."""
        _need(type(d.get("id")) is int and d.get("side", STUDENT) in (STUDENT, HARNESS), "alça inválida")
        return cls(d["id"], d.get("side", STUDENT), str(d.get("kind", "object"))[:20], str(d.get("name", "?"))[:80])


def _np():
    import numpy
    return numpy


def _torch():
    import sys
    return sys.modules.get("torch")


def _float(x: float):
    if math.isfinite(x):
        return {"t": "float", "v": x}
    return {"t": "float", "v": "nan" if x != x else ("inf" if x > 0 else "-inf")}


def encode(value, to_handle=None, _depth=0):
    """Valor -> estrutura JSON. `to_handle(obj)` devolve a `Handle` do objeto (ou levanta NotData)."""
    if _depth > MAX_DEPTH:
        raise NotData(f"aninhamento maior que {MAX_DEPTH} níveis")
    t = type(value)
    if value is None:
        return {"t": "none"}
    if t is bool:
        return {"t": "bool", "v": bool(value)}
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        return _encode_tensor(torch, value)
    if torch is not None and t is torch.dtype:
        return {"t": "dtype", "v": str(value).replace("torch.", "")}
    if torch is not None and isinstance(value, torch.Generator) and value.device.type == "cpu":
        return {"t": "generator", "state": _encode_tensor(torch, value.get_state())}
    np = _np()
    if isinstance(value, np.ndarray):
        return _encode_array(np, value)
    if isinstance(value, np.generic):
        arr = np.asarray(value)
        return {**_encode_array(np, arr), "t": "npscalar"}
    if isinstance(value, bool):
        return {"t": "bool", "v": bool(value)}
    if isinstance(value, int):
        return {"t": "int", "v": int.__index__(value)}
    if isinstance(value, float):
        return _float(float.__float__(value))
    if isinstance(value, complex):
        c = complex.__complex__(value)
        return {"t": "complex", "re": _float(c.real), "im": _float(c.imag)}
    if isinstance(value, str):
        return {"t": "str", "v": str.__str__(value)}
    if isinstance(value, (tuple, list)):
        items = tuple.__iter__(value) if isinstance(value, tuple) else list.__iter__(value)
        items = list(items)
        if len(items) > MAX_ITEMS:
            raise NotData(f"{type(value).__name__} com mais de {MAX_ITEMS} elementos")
        return {"t": "tuple" if isinstance(value, tuple) else "list",
                "v": [encode(x, to_handle, _depth + 1) for x in items]}
    if isinstance(value, dict):
        items = list(dict.items(value))
        if len(items) > MAX_ITEMS:
            raise NotData(f"dicionário com mais de {MAX_ITEMS} elementos")
        return {"t": "dict", "v": [[encode(k, to_handle, _depth + 1), encode(v, to_handle, _depth + 1)]
                                   for k, v in items]}
    if to_handle is not None:
        return to_handle(value).encode()
    raise NotData(f"um valor do tipo {type(value).__name__} não pode ser enviado ao outro kernel "
                  "(só números, textos, tensores, arrays e tuplas, listas e dicionários deles)")


def _encode_tensor(torch, x):
    with torch.no_grad(), torch._C.DisableTorchFunctionSubclass():
        plain = x.detach().cpu().contiguous()
    dtype = str(plain.dtype).replace("torch.", "")
    if dtype not in _TORCH_DTYPES:
        raise NotData(f"tensor com dtype {dtype} não pode ser enviado")
    raw = plain.reshape(-1).view(torch.uint8).numpy().tobytes() if plain.numel() else b""
    if len(raw) > MAX_BYTES:
        raise NotData(f"tensor de {len(raw) // 2**20} MiB: o limite é {MAX_BYTES // 2**20} MiB")
    return {"t": "tensor", "dtype": dtype, "shape": list(plain.shape), "grad": bool(x.requires_grad),
            "ptr": int(x.data_ptr()) if x.numel() else 0, "b64": base64.b64encode(raw).decode("ascii")}


def _encode_array(np, a):
    a = np.asarray(a).view(np.ndarray)
    if not a.flags.c_contiguous:
        a = a.copy(order="C")           # (ascontiguousarray faria de um 0-d um array 1-d)
    if a.dtype.kind not in "biufc" or a.dtype.byteorder not in "=|<":
        raise NotData(f"array com dtype {a.dtype} não pode ser enviado (só números e booleanos)")
    raw = a.tobytes()
    if len(raw) > MAX_BYTES:
        raise NotData(f"array de {len(raw) // 2**20} MiB: o limite é {MAX_BYTES // 2**20} MiB")
    return {"t": "ndarray", "dtype": a.dtype.str, "shape": list(a.shape),
            "b64": base64.b64encode(raw).decode("ascii")}


def _need(cond, what):
    if not cond:
        raise BadWire(what)


def _dec_float(v):
    if isinstance(v, str):
        _need(v in ("nan", "inf", "-inf"), f"float inválido {v!r:.40}")
        return float(v)
    _need(type(v) in (int, float), "float inválido")
    return float(v)


def _shape(d):
    shape = d.get("shape")
    _need(isinstance(shape, list) and len(shape) <= 32 and all(type(n) is int and n >= 0 for n in shape),
          "forma inválida")
    n = 1
    for s in shape:
        n *= s
    return shape, n


def decode(d, from_handle=None, _depth=0):
    """Estrutura JSON -> valor (objetos comuns do Python, do torch e do NumPy)."""
    _need(_depth <= MAX_DEPTH + 1, "aninhamento grande demais")
    _need(isinstance(d, dict) and isinstance(d.get("t"), str), "valor sem tipo")
    t = d["t"]
    if t == "none":
        return None
    if t == "bool":
        _need(type(d.get("v")) is bool, "bool inválido")
        return d["v"]
    if t == "int":
        _need(type(d.get("v")) is int, "int inválido")
        return d["v"]
    if t == "float":
        return _dec_float(d.get("v"))
    if t == "complex":
        return complex(decode(d.get("re"), None, _depth + 1), decode(d.get("im"), None, _depth + 1))
    if t == "str":
        _need(type(d.get("v")) is str, "str inválido")
        return d["v"]
    if t in ("tuple", "list"):
        _need(isinstance(d.get("v"), list) and len(d["v"]) <= MAX_ITEMS, "sequência inválida")
        items = [decode(x, from_handle, _depth + 1) for x in d["v"]]
        return tuple(items) if t == "tuple" else items
    if t == "dict":
        _need(isinstance(d.get("v"), list) and len(d["v"]) <= MAX_ITEMS, "dicionário inválido")
        out = {}
        for pair in d["v"]:
            _need(isinstance(pair, list) and len(pair) == 2, "par inválido")
            key = decode(pair[0], None, _depth + 1)
            _need(isinstance(key, (str, int, float, bool, tuple)) or key is None, "chave inválida")
            out[key] = decode(pair[1], from_handle, _depth + 1)
        return out
    if t == "dtype":
        torch = _torch()
        _need(torch is not None and d.get("v") in _TORCH_DTYPES, "dtype inválido")
        return getattr(torch, d["v"])
    if t == "tensor":
        import torch
        _need(d.get("dtype") in _TORCH_DTYPES and isinstance(d.get("b64"), str), "tensor inválido")
        shape, n = _shape(d)
        dtype = getattr(torch, d["dtype"])
        raw = base64.b64decode(d["b64"], validate=True)
        size = torch.empty((), dtype=dtype).element_size()
        _need(len(raw) == n * size, "tensor com bytes a mais ou a menos")
        if n == 0:
            x = torch.empty(shape, dtype=dtype)
        else:
            x = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(dtype).reshape(shape).clone()
        if d.get("grad") is True and (x.is_floating_point() or x.is_complex()):
            x.requires_grad_(True)
        if type(d.get("ptr")) is int and d["ptr"]:
            # a identidade do buffer do outro lado: `cache.k.data_ptr()` antes e depois de um
            # append diz se o aluno escreveu no mesmo buffer (a cópia daqui é sempre nova)
            x.data_ptr = (lambda p=d["ptr"]: p)
        return x
    if t == "generator":
        import torch
        state = decode(d.get("state"), None, _depth + 1)
        _need(isinstance(state, torch.Tensor) and state.dtype == torch.uint8, "gerador inválido")
        g = torch.Generator()
        try:
            g.set_state(state)
        except (RuntimeError, ValueError):
            raise BadWire("estado de gerador inválido") from None
        return g
    if t in ("ndarray", "npscalar"):
        np = _np()
        _need(isinstance(d.get("dtype"), str) and len(d["dtype"]) <= 8 and isinstance(d.get("b64"), str),
              "array inválido")
        dtype = np.dtype(d["dtype"])
        _need(dtype.kind in "biufc", "dtype de array inválido")
        shape, n = _shape(d)
        raw = base64.b64decode(d["b64"], validate=True)
        _need(len(raw) == n * dtype.itemsize, "array com bytes a mais ou a menos")
        a = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        return a[()] if t == "npscalar" else a
    if t == "handle":
        _need(from_handle is not None, "alça inválida")
        return from_handle(Handle.decode(d))
    raise BadWire(f"tipo desconhecido {t!r:.40}")


def dumps(obj) -> str:
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False)
    if len(text) > MAX_BYTES:
        raise NotData(f"mensagem de {len(text) // 2**20} MiB: o limite é {MAX_BYTES // 2**20} MiB")
    return text


def loads(text: str):
    if not isinstance(text, str) or len(text) > MAX_BYTES:
        raise BadWire(f"mensagem maior que {MAX_BYTES // 2**20} MiB (ou não é texto)")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:
        raise BadWire(f"JSON inválido: {str(e)[:100]}") from None
