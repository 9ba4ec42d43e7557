"""As planilhas (CSV) do workspace: o formato (separador, BOM, língua do Moodle) e a escrita.

Toda célula de texto que uma planilha leria como fórmula (começando com `=`,
`+`, `-`, `@`, `|`, tabulação, retorno de carro ou quebra de linha, também depois de
espaços e de caracteres invisíveis, e também em toda forma que a NFKC leva a um deles, como
o `＝` de largura total; OWASP, "CSV Injection") ganha um apóstrofo na frente: o nome
`=HYPERLINK(...)` de um participante chega ao Excel como texto. Números (`-3`, `2,5`) e o traço sozinho (`-`,
"sem data" na planilha do Moodle) ficam como estão.
"""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

_FORMULA_START = frozenset("=+-@|\t\r\n")
_PLAIN_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?")


def _invisible(ch: str) -> bool:
    """Um caractere que a planilha pula antes do primeiro que conta: espaços de todo tipo
    (também os que a NFKC faz espaço) e os de formatação que não aparecem (U+200B, U+FEFF...)."""
    return ch.isspace() or unicodedata.category(ch) == "Cf" or unicodedata.normalize("NFKC", ch).isspace()


def safe_cell(value) -> str:
    """O texto de uma célula sem nada que uma planilha executaria como fórmula."""
    text = "" if value is None else str(value)
    if text == "-" or _PLAIN_NUMBER.fullmatch(text):
        return text
    if text[:1] in _FORMULA_START:
        return "'" + text
    # o primeiro caractere que conta: depois de espaços e invisíveis, na forma NFKC (o `＝` de
    # largura total e o `﹢` pequeno viram `=` e `+`, como a planilha os lê)
    first = next((ch for ch in text if not _invisible(ch)), "")
    head = unicodedata.normalize("NFKC", first)
    if head and head[0] in _FORMULA_START:
        return "'" + text
    return text


MOODLE_LANGUAGES = ("pt-BR", "en")


@dataclass(frozen=True)
class CsvFormat:
    sep: str = ","
    bom: bool = False
    moodle_language: str = "pt-BR"      # a língua da interface do Moodle que vai importar a planilha

    @property
    def decimal(self) -> str:
        """Com ';' (planilha em português), os números levam vírgula decimal."""
        return "," if self.sep == ";" else "."

    def check(self) -> None:
        if len(self.sep) != 1 or self.sep in "\"\r\n":
            raise ValueError(f"--sep espera um caractere separador (',', ';' ou tab), veio {self.sep!r}")
        if self.moodle_language not in MOODLE_LANGUAGES:
            raise ValueError(f"--moodle-language espera {' ou '.join(MOODLE_LANGUAGES)} (a língua da "
                             f"interface do Moodle), veio {self.moodle_language!r}")


def csv_format(state: Path, sep: str | None = None, bom: bool | None = None,
               moodle_language: str | None = None) -> CsvFormat:
    """O formato guardado em `state/csv_format.json`, com o que a linha de comando mudou (e grava)."""
    f = state / "csv_format.json"
    saved = json.loads(f.read_text(encoding="utf-8")) if f.exists() else {}
    fmt = CsvFormat(sep if sep is not None else saved.get("sep", ","),
                    bom if bom is not None else saved.get("bom", False),
                    moodle_language if moodle_language is not None else saved.get("moodle_language", "pt-BR"))
    fmt.check()
    given = (sep, bom, moodle_language)
    if any(v is not None for v in given) and asdict(fmt) != saved:
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(asdict(fmt)), encoding="utf-8")
    return fmt


def write_csv(path: Path, columns: list[str], rows: Iterable[dict], fmt: CsvFormat | None = None,
              extra_rows: Iterable[list] = ()) -> Path:
    """Grava de forma atômica, cada célula por `safe_cell`; `extra_rows` vêm logo depois do
    cabeçalho (p.ex. "Points Possible" do Canvas)."""
    fmt = fmt or CsvFormat()
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=fmt.sep, lineterminator="\n")
    w.writerow([safe_cell(c) for c in columns])
    for r in extra_rows:
        w.writerow([safe_cell(v) for v in r])
    for rec in rows:
        unknown = set(rec) - set(columns)
        if unknown:
            raise ValueError(f"colunas fora do cabeçalho: {sorted(unknown)}")
        w.writerow([safe_cell(rec.get(c, "")) for c in columns])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(("\ufeff" if fmt.bom else "") + buf.getvalue(), encoding="utf-8")
    tmp.replace(path)
    return path
