"""Uma tabela pequena de GPUs de data center, para as frases do livro que dependem do hardware.

Quando o livro diz "isso não cabe numa GPU" ou "a virada do roofline fica em
~295 FLOP/byte", a frase é calculada daqui, e não digitada: se a tabela mudar
(uma GPU nova, um número corrigido), a página muda junto e continua verdadeira.

Os valores são os das fichas técnicas dos fabricantes (endereço em `source`):
memória em GB como a ficha a escreve (lida aqui como 10⁹ bytes, a leitura
mais conservadora), largura de banda da HBM em bytes/s e pico de FLOP/s em
BF16 **densa** (sem a esparsidade 2:4, que as fichas costumam somar e que
dobra o número). `checked` é a data em que os números foram conferidos; a
construção do livro não acessa a rede, então os números foram conferidos com
cópias públicas dessas fichas e deve ser refeita quando a tabela for
atualizada.

    from atencao.hardware import DEVICES, device, memory_sentence
    device("H100 SXM").ridge          # FLOP/byte na virada do roofline
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from .plots import fmt_int, fmt_num

GB = 10**9


@dataclass(frozen=True)
class Device:
    """Uma GPU da tabela, com os números da ficha técnica."""

    name: str                # nome curto, como o livro escreve
    memory_gb: int           # memória da ficha, em GB (10⁹ bytes)
    bandwidth: float         # largura de banda da HBM, bytes/s
    peak_bf16: float         # pico em BF16 denso, FLOP/s
    source: str              # ficha técnica do fabricante
    checked: str             # data em que os números foram conferidos (AAAA-MM-DD)

    @property
    def memory_bytes(self) -> int:
        return self.memory_gb * GB

    @property
    def ridge(self) -> float:
        """Virada do roofline, pi/beta, em FLOP por byte."""
        return self.peak_bf16 / self.bandwidth


DEVICES: tuple[Device, ...] = (
    Device("A100 SXM 80GB", 80, 2.039e12, 312e12,
           "https://www.nvidia.com/en-us/data-center/a100/", "2026-11-30"),
    Device("H100 SXM", 80, 3.35e12, 989e12,
           "https://www.nvidia.com/en-us/data-center/h100/", "2026-11-30"),
    Device("H200 SXM", 141, 4.8e12, 989e12,
           "https://www.nvidia.com/en-us/data-center/h200/", "2026-11-30"),
    Device("B200 (HGX)", 180, 8.0e12, 2.25e15,
           "https://www.nvidia.com/en-us/data-center/hgx/", "2026-11-30"),
    Device("AMD MI300X", 192, 5.3e12, 1307.4e12,
           "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html", "2026-11-30"),
    Device("AMD MI355X", 288, 8.0e12, 2.5e15,
           "https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html", "2026-11-30"),
)


def device(name: str) -> Device:
    """A GPU da tabela com esse nome; erro claro se não houver."""
    for d in DEVICES:
        if d.name == name:
            return d
    nomes = ", ".join(d.name for d in DEVICES)
    raise KeyError(f"GPU {name!r} não está na tabela de atencao.hardware; as que estão: {nomes}")


def largest() -> Device:
    """A GPU com mais memória na tabela."""
    return max(DEVICES, key=lambda d: d.memory_gb)


def fitting(nbytes: float) -> list[Device]:
    """As GPUs da tabela cuja memória comporta `nbytes` (só esse tensor, nada mais)."""
    if nbytes < 0:
        raise ValueError(f"esperava um número de bytes >= 0, veio {nbytes}")
    return [d for d in DEVICES if nbytes <= d.memory_bytes]


def memory_sentence(nbytes: float, small: str = "H100 SXM") -> str:
    """Frase em português sobre onde cabe um tensor de `nbytes`, calculada da tabela.

    Diz se cabe na GPU `small` (a de 80 GB que o livro usa como exemplo),
    quantas GPUs da tabela o comportariam e que fração da maior ele ocuparia.
    """
    ref, maior, cabem = device(small), largest(), fitting(nbytes)
    frac = 100 * nbytes / maior.memory_bytes
    if nbytes > maior.memory_bytes:
        return (f"mais do que a memória de qualquer GPU da tabela do livro: a maior, "
                f"a {maior.name}, tem {fmt_int(maior.memory_gb)} GB")
    inicio = ("cabe" if nbytes <= ref.memory_bytes else "não cabe") + \
        f" numa GPU de {fmt_int(ref.memory_gb)} GB como a {ref.name}"
    if len(cabem) == len(DEVICES):
        return inicio + "; cabe em todas as GPUs da tabela do livro"
    nomes = [d.name for d in cabem]
    quais = nomes[0] if len(nomes) == 1 else ", ".join(nomes[:-1]) + " e " + nomes[-1]
    return (f"{inicio}; das {len(DEVICES)} GPUs da tabela do livro, só "
            f"{'a' if len(cabem) == 1 else 'as'} {quais} "
            f"{'a guardaria' if len(cabem) == 1 else 'a guardariam'}, e na maior, a "
            f"{maior.name} ({fmt_int(maior.memory_gb)} GB), ela sozinha ocuparia "
            f"{fmt_num(frac, 0)}% da memória")


def table_rows() -> list[list[str]]:
    """As linhas da tabela, já formatadas à brasileira (o cabeçalho em `TABLE_HEADER`)."""
    return [[d.name, fmt_int(d.memory_gb), fmt_num(d.bandwidth / 1e12, 2), fmt_num(d.peak_bf16 / 1e12, 0),
             fmt_num(d.ridge, 0), d.source, "/".join(reversed(d.checked.split("-")))] for d in DEVICES]


TABLE_HEADER = ["GPU", "memória (GB)", "HBM (TB/s)", "pico BF16 denso (TFLOP/s)", "virada (FLOP/byte)",
                "ficha técnica", "conferida em"]


def table_html() -> str:
    """A tabela em HTML, para o livro mostrar de onde vêm os números (MyST-NB não desenha tabela Markdown)."""
    cab = "".join(f"<th>{escape(c)}</th>" for c in TABLE_HEADER)
    linhas = []
    for row in table_rows():
        url = row[5]
        cels = [escape(c) for c in row[:5]] + [f'<a href="{escape(url)}">{escape(url.split("/")[2])}</a>',
                                               escape(row[6])]
        linhas.append("<tr>" + "".join(f"<td>{c}</td>" for c in cels) + "</tr>")
    return f'<table class="table"><thead><tr>{cab}</tr></thead><tbody>{"".join(linhas)}</tbody></table>'
