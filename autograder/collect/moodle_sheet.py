"""Os horários de entrega de uma turma do Moodle, lidos da planilha de avaliação do próprio Moodle.

O zip "Baixar todas as submissões" não traz horário nenhum: sem ele, um prazo não pode ser
conferido. A planilha de avaliação que o Moodle baixa ("Baixar planilha de avaliação", do
plugin de retorno offline) traz, para cada participante, a última modificação do envio.
O professor passa o arquivo que baixou (`grade --moodle-worksheet`), e o horário de cada
entrega do zip vem da linha do mesmo número de participante.

As colunas são achadas pelo nome, nas duas línguas da interface que o corretor conhece
(os textos do Moodle: `recordid`, `fullname`, `status` e `lastmodifiedsubmission` de
mod/assign, na tabela de correção `assign_grading_table`; as mesmas que readers/exports.py
escreve): "Identificador" / "Identifier", "Nome completo" / "Full name", "Status",
"Última modificação (envio)" / "Last modified (submission)". O número de participante é o
que vem depois de "Participante" / "Participant " no identificador.

O horário vem como o Moodle o escreve (`userdate`, no formato `strftimedaydatetime` da
língua de quem baixou: "quinta-feira, 12 mar 2026, 10:15", "Thursday, 12 March 2026,
10:15 AM"), sem segundos e no fuso de quem baixou: ele é lido no fuso dos prazos.
"-" (sem envio) fica sem horário.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

IDENTIFIER = ("Identificador", "Identifier")
FULL_NAME = ("Nome completo", "Full name")
STATUS = ("Status",)
SUBMITTED_AT = ("Última modificação (envio)", "Last modified (submission)")

# as três primeiras letras do mês (sem acento), em português e em inglês
_MONTHS = {"jan": 1, "fev": 2, "feb": 2, "mar": 3, "abr": 4, "apr": 4, "mai": 5, "may": 5, "jun": 6,
           "jul": 7, "ago": 8, "aug": 8, "set": 9, "sep": 9, "out": 10, "oct": 10, "nov": 11, "dez": 12,
           "dec": 12}


@dataclass
class Worksheet:
    """O que a planilha diz de cada participante (número -> horário ou None, nome)."""

    path: Path
    times: dict[str, datetime | None] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()


def parse_moodle_time(text: str, tz: ZoneInfo) -> datetime | None:
    """Um horário da planilha do Moodle, no fuso `tz`; None para "-" ou vazio.

    Aceita o formato longo do Moodle nas duas línguas (dia da semana, dia, mês por extenso
    ou abreviado, ano, hora com ou sem AM/PM), "12/03/2026 10:15" e "2026-03-12 10:15"."""
    t = (text or "").strip()
    if t in ("", "-", "—", "–"):
        return None
    m = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4}),?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?", t)
    if m:
        d, mo, y, h, mi, s = (int(x or 0) for x in m.groups())
        return datetime(y, mo, d, h, mi, s, tzinfo=tz)
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?", t)
    if m:
        y, mo, d, h, mi, s = (int(x or 0) for x in m.groups())
        return datetime(y, mo, d, h, mi, s, tzinfo=tz)
    folded = _fold(t).replace(".", "")
    clock = re.search(r"(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(am|pm)?", folded)
    year = re.search(r"\b(\d{4})\b", folded)
    rest = folded[:clock.start()] + " " + folded[clock.end():] if clock else folded
    day = re.search(r"\b(\d{1,2})\b", rest.replace(year.group(1), " ") if year else rest)
    month = next((_MONTHS[w[:3]] for w in re.findall(r"[a-z]+", rest) if w[:3] in _MONTHS and len(w) >= 3), None)
    if not (clock and year and day and month):
        raise ValueError(f"horário que não sei ler: {text!r} (esperava, p.ex., "
                         "'quinta-feira, 12 mar 2026, 10:15' ou '12/03/2026 10:15')")
    h, mi = int(clock.group(1)), int(clock.group(2))
    if clock.group(4) == "pm" and h < 12:
        h += 12
    elif clock.group(4) == "am" and h == 12:
        h = 0
    try:
        return datetime(int(year.group(1)), month, int(day.group(1)), h, mi, int(clock.group(3) or 0), tzinfo=tz)
    except ValueError:
        raise ValueError(f"horário inválido: {text!r}") from None


def _column(header: list[str], names: tuple[str, ...]) -> str | None:
    wanted = {_fold(n).strip() for n in names}
    return next((h for h in header if _fold(h or "").strip() in wanted), None)


def read_worksheet(path: Path, tz: ZoneInfo) -> Worksheet:
    """Lê a planilha de avaliação baixada do Moodle (CSV, vírgula ou ponto e vírgula)."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as e:
        raise ValueError(f"{path}: não consegui ler a planilha do Moodle ({e.strerror or e})") from None
    except UnicodeDecodeError:
        text = path.read_bytes().decode("cp1252")          # reaberta e salva pelo Excel no Windows
    first = text.splitlines()[0] if text.strip() else ""
    sep = ";" if first.count(";") > first.count(",") else ","
    reader = csv.DictReader(io.StringIO(text), delimiter=sep)
    header = [h for h in (reader.fieldnames or []) if h is not None]
    ident, when = _column(header, IDENTIFIER), _column(header, SUBMITTED_AT)
    name = _column(header, FULL_NAME)
    if ident is None or when is None:
        raise ValueError(
            f"{path}: não parece a planilha de avaliação do Moodle: faltam as colunas "
            f"{' / '.join(IDENTIFIER) if ident is None else ''}"
            f"{' e ' if ident is None and when is None else ''}"
            f"{' / '.join(SUBMITTED_AT) if when is None else ''} (vieram: {', '.join(header) or 'nenhuma'}). "
            "Baixe-a na tarefa do Moodle: Ver todos os envios → Ação de avaliação → "
            "Baixar planilha de avaliação")
    out = Worksheet(path)
    for i, row in enumerate(reader, start=2):
        m = re.search(r"(\d+)\s*$", (row.get(ident) or "").strip())
        if not m:
            continue
        try:
            out.times[m.group(1)] = parse_moodle_time(row.get(when) or "", tz)
        except ValueError as e:
            raise ValueError(f"{path}, linha {i}: {e}") from None
        if name and (row.get(name) or "").strip():
            out.names[m.group(1)] = row[name].strip()
    if not out.times:
        raise ValueError(f"{path}: nenhuma linha com número de participante (coluna {ident})")
    return out


def apply_times(sheet: Worksheet, subs: list, assignment: str) -> list[str]:
    """Põe o horário da planilha nas entregas de `assignment` que vieram do zip do Moodle (pelo
    número de participante); devolve os avisos, em português, do que não pôde ser casado."""
    warnings = []
    for sub in subs:
        if sub.assignment != assignment or not sub.files:
            continue
        if not sub.participant:
            warnings.append(f"{sub.name or sub.student}/{assignment}: sem número de participante do Moodle; "
                            f"o horário de entrega não vem de {sheet.path.name}")
        elif sub.participant not in sheet.times:
            warnings.append(f"{sub.name} (participante {sub.participant})/{assignment}: não está em "
                            f"{sheet.path.name}; sem horário de entrega")
        elif sheet.times[sub.participant] is None:
            warnings.append(f"{sub.name} (participante {sub.participant})/{assignment}: {sheet.path.name} "
                            "não tem horário de envio (\"-\"); sem horário de entrega")
        elif sub.timestamp is None:
            sub.timestamp = sheet.times[sub.participant]
    return warnings
