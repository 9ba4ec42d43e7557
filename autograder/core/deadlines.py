"""Prazos e política de atraso, guardados no workspace (`prazos.toml`).

Dados uma vez (`grade --deadline`, `deadlines`), valem para todo comando seguinte:
`report` e `feedback` rodados depois da correção manual mostram o mesmo atraso.
O arquivo é TOML e o professor pode editá-lo à mão:

    fuso = "America/Sao_Paulo"

    [prazos]
    "01-pontuacoes" = "2026-03-10 23:59:00"

    [atraso]
    tolerancia_min = 15      # até 15 min depois do prazo não conta como atraso
    multa_por_dia = 10.0     # % da nota máxima por dia (ou fração de dia) de atraso
    zero_apos_dias = 7       # mais de 7 dias de atraso: nota zero

Horários sem fuso são lidos no fuso do arquivo (padrão America/Sao_Paulo).
As tarefas com prazo são as tarefas dadas: sem `--assignment`, `grade` corrige
só essas (veja plan/runner.py).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

from atencao.fmt import duration, num

DEFAULT_TZ = "America/Sao_Paulo"

FILE = "prazos.toml"
MINUTES_PER_DAY = 24 * 60


def parse_time(text: str, tz: ZoneInfo) -> datetime:
    """Lê um horário; sem fuso explícito, ele está em `tz`."""
    t = text.strip()
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})-(\d{2})-(\d{2})-(\d{2})", t)
    if m:                                  # formato dos nomes do Blackboard
        y, mo, d, h, mi, s = map(int, m.groups())
        return datetime(y, mo, d, h, mi, s, tzinfo=tz)
    utc = False
    for suffix in (" UTC", "UTC", "Z"):
        if t.endswith(suffix):
            t, utc = t[: -len(suffix)].strip(), True
            break
    try:
        dt = datetime.fromisoformat(t)
    except ValueError:
        raise ValueError(f"horário inválido: {text!r} (use AAAA-MM-DD HH:MM[:SS], "
                         "opcionalmente com fuso, p.ex. -03:00 ou Z)") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc if utc else tz)
    return dt


@dataclass
class LatePolicy:
    """Tolerância e multa; o padrão (tudo zero) só registra o atraso."""

    grace_minutes: int = 0
    penalty_per_day: float = 0.0          # % da nota máxima por dia começado
    zero_after_days: int | None = None    # mais dias que isto: nota zero

    def check(self) -> None:
        if self.grace_minutes < 0:
            raise ValueError(f"a tolerância é em minutos, 0 ou mais; veio {self.grace_minutes}")
        if not 0 <= self.penalty_per_day <= 100:
            raise ValueError(f"a multa por dia é uma porcentagem entre 0 e 100; veio {self.penalty_per_day}")
        if self.zero_after_days is not None and self.zero_after_days < 0:
            raise ValueError(f"zero após quantos dias? esperava 0 ou mais; veio {self.zero_after_days}")


# O que toda saída diz de uma entrega sem horário numa tarefa com prazo (nunca "no prazo").
UNKNOWN = "Sem horário de entrega: o atraso não foi conferido."


@dataclass(frozen=True)
class Lateness:
    """O atraso de uma entrega e a multa que ele dá."""

    minutes: int | None          # None: sem prazo ou sem horário de entrega
    late: bool = False           # passou do prazo + tolerância
    days: int = 0                # dias começados de atraso (para a multa)
    penalty: float = 0.0         # pontos descontados
    unknown: bool = False        # a tarefa tem prazo, mas a entrega não tem horário (zip do Moodle)

    def text(self, on_time: bool = True) -> str:
        """O atraso em palavras, o mesmo em toda saída (planilhas, relatório, página do aluno):
        "Entregue com atraso de 34 h 16 min. Multa por atraso: 1,5 ponto(s)."; com
        `on_time=False`, vazio para o que chegou no prazo."""
        if self.unknown:
            return UNKNOWN
        if self.minutes is None:
            return ""
        if not self.late:
            if not on_time:
                return ""
            return "Entregue no prazo." if self.minutes == 0 else \
                f"Entregue {duration(self.minutes)} depois do prazo, dentro da tolerância."
        text = f"Entregue com atraso de {duration(self.minutes)}."
        if self.penalty:
            text += f" Multa por atraso: {num(self.penalty, ',')} ponto(s)."
        return text


@dataclass
class Deadlines:
    tz: ZoneInfo
    due: dict[str, datetime]
    policy: LatePolicy = field(default_factory=LatePolicy)

    def late_minutes(self, assignment: str, ts: datetime | None) -> int | None:
        """Minutos de atraso (0 = no prazo); None se não há prazo ou horário."""
        d = self.due.get(assignment)
        if d is None or ts is None:
            return None
        delta = (ts - d).total_seconds()
        return 0 if delta <= 0 else int(-(-delta // 60))

    def lateness(self, assignment: str, ts: datetime | None, max_score: float) -> Lateness:
        if ts is None and assignment in self.due:
            return Lateness(None, unknown=True)
        minutes = self.late_minutes(assignment, ts)
        if minutes is None or minutes <= self.policy.grace_minutes:
            return Lateness(minutes)
        days = math.ceil(minutes / MINUTES_PER_DAY)
        frac = min(1.0, days * self.policy.penalty_per_day / 100.0)
        if self.policy.zero_after_days is not None and days > self.policy.zero_after_days:
            frac = 1.0
        return Lateness(minutes, True, days, round(frac * max_score, 4))

    def describe_policy(self) -> str:
        """A política em uma frase, para o relatório e o feedback."""
        p = self.policy
        parts = []
        if p.grace_minutes:
            parts.append(f"tolerância de {p.grace_minutes} min")
        if p.penalty_per_day:
            parts.append(f"multa de {num(p.penalty_per_day, ',')}% da nota máxima por dia de atraso")
        if p.zero_after_days is not None:
            parts.append(f"nota zero com mais de {p.zero_after_days} dia(s) de atraso")
        return "; ".join(parts) if parts else "atraso registrado, sem multa"


def _read_raw(workspace: Path) -> dict:
    toml_f, json_f = workspace / FILE, workspace / "prazos.json"
    if toml_f.exists():
        import tomllib
        try:
            return tomllib.loads(toml_f.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"{toml_f}: TOML inválido: {e}") from None
    if json_f.exists():
        try:
            return json.loads(json_f.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise ValueError(f"{json_f}: JSON inválido: {e}") from None
    return {}


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except Exception:  # noqa: BLE001
        raise ValueError(f"fuso horário desconhecido: {name!r} (exemplo: America/Sao_Paulo)") from None


def _policy(raw: dict) -> LatePolicy:
    a = raw.get("atraso") or {}
    if not isinstance(a, dict):
        raise ValueError("[atraso] em prazos.toml deve ser uma tabela")
    try:
        zero = a.get("zero_apos_dias")
        p = LatePolicy(int(a.get("tolerancia_min", 0)), float(a.get("multa_por_dia", 0.0)),
                       None if zero is None else int(zero))
    except (TypeError, ValueError):
        raise ValueError("[atraso] em prazos.toml: tolerancia_min e zero_apos_dias são inteiros, "
                         "multa_por_dia é um número") from None
    p.check()
    return p


def load_deadlines(workspace: Path, cli: list[str] | None = None, tz_name: str | None = None) -> Deadlines:
    """prazos.toml (ou prazos.json) do workspace, depois --deadline TAREFA=DATA da linha de comando."""
    raw = _read_raw(Path(workspace))
    tz = _zone(tz_name or raw.get("fuso") or DEFAULT_TZ)
    due: dict[str, datetime] = {}
    for a, v in (raw.get("prazos") or {}).items():
        if isinstance(v, datetime):
            due[a] = v if v.tzinfo else v.replace(tzinfo=tz)
        else:
            due[a] = parse_time(str(v), tz)
    for item in cli or []:
        a, sep, v = item.partition("=")
        if not sep or not a.strip():
            raise ValueError(f"--deadline espera TAREFA=DATA, veio {item!r}")
        due[a.strip()] = parse_time(v, tz)
    return Deadlines(tz, due, _policy(raw))


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)      # string básica do TOML (mesmos escapes)


def save_deadlines(workspace: Path, d: Deadlines) -> Path:
    """Reescreve prazos.toml (comentários escritos à mão não são preservados)."""
    lines = ["# Prazos e política de atraso deste workspace: escritos por `python -m autograder`",
             "# (grade --deadline, deadlines) e lidos por todo comando. Pode ser editado à mão.",
             f"fuso = {_toml_str(str(d.tz))}", "", "[prazos]"]
    for a in sorted(d.due):
        lines.append(f"{_toml_str(a)} = {_toml_str(d.due[a].astimezone(d.tz).strftime('%Y-%m-%d %H:%M:%S'))}")
    p = d.policy
    lines += ["", "[atraso]", f"tolerancia_min = {p.grace_minutes}",
              f"multa_por_dia = {float(p.penalty_per_day)!r}"]
    if p.zero_after_days is not None:
        lines.append(f"zero_apos_dias = {p.zero_after_days}")
    out = Path(workspace) / FILE
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(out)
    return out


def update_deadlines(workspace: Path, cli: list[str] | None = None, tz_name: str | None = None, *,
                     grace: int | None = None, per_day: float | None = None,
                     zero_after: int | None = None, no_zero: bool = False,
                     remove: list[str] | None = None) -> Deadlines:
    """Lê os prazos do workspace, aplica o que a linha de comando mudou e grava se mudou algo."""
    workspace = Path(workspace)
    d = load_deadlines(workspace, cli, tz_name)
    for a in remove or []:
        if a not in d.due:
            raise ValueError(f"--remove {a}: essa tarefa não tem prazo (têm: {', '.join(sorted(d.due)) or 'nenhuma'})")
        del d.due[a]
    if grace is not None:
        d.policy.grace_minutes = grace
    if per_day is not None:
        d.policy.penalty_per_day = per_day
    if zero_after is not None:
        d.policy.zero_after_days = zero_after
    if no_zero:
        d.policy.zero_after_days = None
    d.policy.check()
    changed = bool(cli or tz_name or remove or grace is not None or per_day is not None
                   or zero_after is not None or no_zero)
    if changed:
        save_deadlines(workspace, d)
    return d
