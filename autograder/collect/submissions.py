"""Entregas: de uma pasta ou de um zip do AVA para `submitted/<aluno>/<tarefa>/`.

Formatos aceitos (nesta ordem):

- pasta `<aluno>/<tarefa>/<notebook>.ipynb` (o `submitted/` do nbgrader), com
  `timestamp.txt` opcional na pasta da tarefa; com `--assignment`, também
  `<aluno>/<notebook>.ipynb`;
- zip com a mesma estrutura (em qualquer subpasta; a pasta de tarefa mais externa decide);
- zip do Blackboard/nbgrader ZipCollect: `<tarefa>_<aluno>_attempt_AAAA-MM-DD-HH-MM-SS[_<arquivo>].ipynb`;
- zip do Moodle: `<Nome do Aluno>_<id>_assignsubmission_file_/<arquivo>.ipynb` (testado
  antes dos outros: a pasta do Moodle é o aluno, e nada dentro dela nomeia outro aluno),
  ou sem pastas, `<Nome do Aluno>_<id>_assignsubmission_file_<arquivo>.ipynb`; sem
  `--assignment`, a tarefa é a que o nome do notebook diz;
- zip plano: `<aluno>.ipynb` (com `--assignment`) ou `<aluno>_<tarefa>.ipynb`;
- `--pattern REGEX` com grupos nomeados `student` (obrigatório), `assignment`,
  `notebook`, `timestamp`, testado antes de todos.

Horários sem fuso (nomes do zip, `timestamp.txt` sem sufixo) são lidos no fuso
dos prazos (padrão America/Sao_Paulo) — o nbgrader os trataria como UTC e uma
entrega 30 min atrasada passaria como no prazo. Nada é extraído pelo nome que
vem no zip: o caminho de destino é montado com identificadores saneados.
"""

from __future__ import annotations

import hashlib
import re
import stat
import unicodedata
import zipfile
import zlib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from atencao.fmt import integer
from ..core.settings import MIB, CollectLimits
from .spool import Spool, SpooledFiles

MAX_FILE = CollectLimits.file        # 50 MiB: um notebook maior que isso é inválido
MAX_STUDENT = CollectLimits.student  # 200 MiB por aluno e tarefa, somando os arquivos
# Erros de leitura que viram uma observação na linha do aluno (nunca derrubam a coleta):
# arquivo sumido ou sem permissão, zip corrompido ou cifrado, compressão desconhecida.
READ_ERRORS = (OSError, zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError,
               ValueError)
# A pasta de uma entrega no zip "Baixar todas as submissões" do Moodle:
# "<Nome Completo>_<número de participante>_assignsubmission_<plugin>_" (o plugin de
# arquivos é `file`; o de texto online, `onlinetext`). Único lugar onde o formato é escrito.
MOODLE_FOLDER = re.compile(r"(?P<name>.+?)_(?P<id>\d+)_assignsubmission_(?P<plugin>[A-Za-z]+)_?")
# O mesmo zip baixado sem pastas ("Baixar envios em pastas" desmarcado): o nome do arquivo
# vem depois do prefixo, "<Nome>_<número>_assignsubmission_file_<arquivo>".
MOODLE_FLAT = re.compile(r"(?P<name>.+?)_(?P<id>\d+)_assignsubmission_(?P<plugin>[A-Za-z]+)_(?P<file>.+)")


@dataclass
class Submission:
    student: str                                               # id único: pasta, gradebook, CSV
    assignment: str
    files: dict[str, bytes] = field(default_factory=dict)    # nome relativo -> conteúdo
    timestamp: datetime | None = None                          # com fuso
    origin: str = ""
    notes: list[str] = field(default_factory=list)            # vão para a linha do aluno
    name: str = ""                                             # o nome como veio (pasta, zip, AVA)
    participant: str | None = None                             # número de participante do Moodle
    size: int = 0                                              # bytes guardados em `files`
    refused: list[str] = field(default_factory=list)          # por que a entrega foi recusada (tetos)
    skipped: dict[str, int] = field(default_factory=dict)     # arquivos que a correção não usa -> tamanho


def needed(rel: str) -> bool:
    """Se a correção usa o arquivo `rel` de uma entrega: só os notebooks da raiz da pasta da
    tarefa (os que `pick_notebook` pode escolher). Nenhum exercício lê arquivo do aluno, e os
    arquivos da versão distribuída vão por cima dos dele (worker/notebook.py, `prepare_run_dir`):
    o resto nem é extraído, nem copiado para o workspace, nem levado à sandbox."""
    return "/" not in rel and rel.endswith(".ipynb")


def mib(n: int) -> str:
    return f"{integer(n // MIB)} MiB" if n >= MIB else f"{integer(n)} bytes"


def slug(text: str) -> str:
    """Identificador seguro para pastas: sem acentos, sem barras, sem espaços."""
    t = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    t = re.sub(r"[^A-Za-z0-9._-]+", "-", t.strip()).strip("-.")
    return t[:80]


def safe_part(part: str) -> str:
    """Um componente de caminho entregue pelo aluno, com o mínimo trocado.

    O nome continua o mesmo para o código do aluno (`open("dados 1.csv")`), só
    perde o que poderia sair da pasta ou confundir o sistema de arquivos:
    barras invertidas, caracteres de controle, `.`/`..` e nomes longos demais."""
    p = unicodedata.normalize("NFC", part)
    p = re.sub(r"[\x00-\x1f\x7f\\]", "_", p).strip()
    if p in ("", ".", ".."):
        return ""
    while len(p.encode()) > 200:
        p = p[:-1]
    return p


def _student_key(name: str, participant: str | None) -> tuple[str, str]:
    return unicodedata.normalize("NFC", name.strip()), participant or ""


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def is_link(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


class Collector:
    """Junta as entregas por (aluno, tarefa) sem nunca juntar dois alunos nem parar a coleta.

    Os alunos são guardados pelo nome como veio (e o número de participante do
    Moodle); o id de cada um só é escolhido no fim (`result`): o nome saneado
    (`slug`), o número de participante quando há (`Maria-Silva_111`), e, se
    dois nomes diferentes ainda dão o mesmo id (`José` e `Jose`, `a b` e
    `a-b`), os que não são exatamente o id ganham um sufixo do hash do nome."""

    def __init__(self, assignments: dict[str, list[str]], tz: ZoneInfo,
                 only: str | None = None, pattern: str | None = None,
                 limits: CollectLimits | None = None, spool: Spool | None = None):
        """assignments: tarefa -> notebooks esperados; only: a tarefa de --assignment;
        limits: os tetos da coleta; spool: onde os bytes ficam (uma pasta temporária nova se None)."""
        self.limits = limits or CollectLimits()
        self.spool = spool or Spool()
        self.class_bytes = 0               # bytes guardados da turma inteira (teto `limits.klass`)
        self.assignments = assignments
        self.tz = tz
        self.only = only
        self.pattern = re.compile(pattern) if pattern else None
        self.subs: dict[tuple[tuple[str, str], str], Submission] = {}
        self.warnings: list[str] = []
        self.undecided: list[str] = []     # arquivos de um aluno sem tarefa que se possa saber
        self.collisions: dict[tuple[str, str], str] = {}

    # -- registro ---------------------------------------------------------------
    def assignment_for(self, assignment: str | None, origin: str) -> str | None:
        assignment = assignment or self.only
        if assignment is None:
            if len(self.assignments) == 1:
                return next(iter(self.assignments))
            self.undecided.append(origin)
            self.warnings.append(f"não sei de qual tarefa é (use --assignment): {origin}")
            return None
        if assignment not in self.assignments:
            self.warnings.append(f"ignorado (tarefa '{assignment}' desconhecida): {origin}")
            return None
        if self.only and assignment != self.only:
            return None
        return assignment

    def submission(self, student_raw: str, assignment: str, origin: str,
             participant: str | None = None) -> Submission | None:
        """A entrega (aluno, tarefa), criada se preciso; None se o nome não serve para id."""
        if not slug(student_raw):
            self.warnings.append(f"ignorado (aluno sem nome válido): {origin}")
            return None
        key = (_student_key(student_raw, participant), assignment)
        if key not in self.subs:
            self.subs[key] = Submission("", assignment, SpooledFiles(self.spool), origin=origin,
                                        name=key[0][0], participant=participant)
        return self.subs[key]

    def note(self, sub: Submission | None, text: str) -> None:
        """Observação na linha do aluno (e nos avisos da coleta)."""
        if sub is not None:
            sub.notes.append(text)
        self.warnings.append(f"{sub.name if sub else '?'}: {text}")

    def admit(self, student_raw: str, assignment: str | None, rel: str, origin: str,
              participant: str | None = None, size: int = 0) -> tuple[Submission, str] | None:
        """(entrega, nome limpo) se o arquivo deve ser lido; None se não (tarefa desconhecida,
        nome inválido, entrega já recusada, ou arquivo que a correção não usa: este fica em
        `skipped`, sem ser lido, e a linha do aluno diz quais foram)."""
        assignment = self.assignment_for(assignment, origin)
        if assignment is None:
            return None
        sub = self.submission(student_raw, assignment, origin, participant)
        if sub is None:
            return None
        parts = [safe_part(p) for p in rel.replace("\\", "/").split("/")]
        parts = [p for p in parts if p]
        if not parts:
            self.note(sub, f"arquivo sem nome válido ignorado: {origin}")
            return None
        rel = "/".join(parts)
        if sub.refused:
            return None
        if not needed(rel):
            sub.skipped[rel] = size
            return None
        return sub, rel

    def caps(self, sub: Submission) -> list[tuple[int, str]]:
        """Quantos bytes o próximo arquivo de `sub` ainda pode ter, por teto, com o motivo."""
        lim = self.limits
        return [(lim.file, f"passa de {mib(lim.file)} (teto por arquivo; um notebook desse "
                           "tamanho é inválido)"),
                (lim.student - sub.size, f"a entrega passaria de {mib(lim.student)} "
                                         "(teto por aluno e tarefa)"),
                (lim.klass - self.class_bytes, f"a turma passaria de {mib(lim.klass)} "
                                               "(teto por turma; mude com --max-class-mib)")]

    def refuse(self, sub: Submission, why: str) -> None:
        """Recusa a entrega inteira (a linha do aluno fica `invalid-notebook` com o motivo);
        os bytes que ela já tinha saem do disco e da conta da turma."""
        if sub.refused:
            return
        for rel in list(sub.files):
            del sub.files[rel]
        self.class_bytes -= sub.size
        sub.size = 0
        sub.refused.append(f"entrega recusada: {why}")           # vai para os detalhes da linha
        self.warnings.append(f"{sub.name}: entrega recusada ({sub.assignment}): {why}")

    def store(self, sub: Submission, rel: str, path: Path, size: int,
              timestamp: datetime | None, origin: str) -> None:
        """Guarda um arquivo que já está no spool (os tetos já foram conferidos por quem leu)."""
        if rel in sub.files:
            if timestamp is not None and sub.timestamp is not None and timestamp <= sub.timestamp:
                self.warnings.append(f"{sub.name}/{sub.assignment}: entrega repetida de {rel}; "
                                     f"fica a mais recente ({origin} ignorado)")
                path.unlink(missing_ok=True)
                return
            self.warnings.append(f"{sub.name}/{sub.assignment}: entrega repetida de {rel}; "
                                 f"fica {origin}")
            old = sub.files.size(rel)
            sub.size -= old
            self.class_bytes -= old
            del sub.files[rel]
        clash = self._clash(sub, rel)
        if clash:
            new = self._free_name(sub, rel)
            if new is None:
                self.note(sub, f"{rel} ignorado: nomes demais colidindo com {clash}")
                path.unlink(missing_ok=True)
                return
            self.note(sub, f"{rel} guardado como {new}: o nome colide com {clash}")
            rel = new
        sub.files.attach(rel, path, size)
        sub.size += size
        self.class_bytes += size
        if timestamp is not None and (sub.timestamp is None or timestamp > sub.timestamp):
            sub.timestamp = timestamp

    @staticmethod
    def _clash(sub: Submission, rel: str) -> str | None:
        """Outro arquivo cujo caminho não deixa `rel` existir (um é pasta do outro)."""
        parts = rel.split("/")
        for k in range(1, len(parts)):
            if "/".join(parts[:k]) in sub.files:
                return "/".join(parts[:k])
        prefix = rel + "/"
        for other in sub.files:
            if other.startswith(prefix):
                return other
        return None

    def _free_name(self, sub: Submission, rel: str) -> str | None:
        """`rel` com `~N` no componente que colide: a pasta (`dados~2/x.csv`) ou o arquivo."""
        parts = rel.split("/")
        clash = self._clash(sub, rel) or rel
        k = len(clash.split("/")) - 1 if not clash.startswith(rel + "/") else len(parts) - 1
        k = min(k, len(parts) - 1)
        name = parts[k]
        stem, dot, ext = name.partition(".") if not name.startswith(".") and k == len(parts) - 1 \
            else (name, "", "")
        for n in range(2, 1000):
            cand = "/".join(parts[:k] + [f"{stem}~{n}{dot}{ext}"] + parts[k + 1:])
            if cand not in sub.files and not self._clash(sub, cand):
                return cand
        return None

    def wanted(self) -> list[str]:
        return [a for a in sorted(self.assignments) if not self.only or a == self.only]

    def student_ids(self) -> dict[tuple[str, str], str]:
        """Id de cada aluno (nome, participante); dois alunos nunca dividem um id.

        Quando dois alunos dariam o mesmo id, no máximo um fica com ele (quem tem número
        de participante do Moodle, senão quem já é exatamente o id); os outros ganham um
        sufixo do hash do nome, e as linhas de todos eles recebem uma observação."""
        base: dict[tuple[str, str], str] = {}
        for (skey, _a) in self.subs:
            name, participant = skey
            b = slug(name)
            base[skey] = f"{b}_{participant}" if participant else b
        groups: dict[str, list[tuple[str, str]]] = {}
        for skey, b in base.items():
            groups.setdefault(b, []).append(skey)
        ids: dict[tuple[str, str], str] = {}
        self.collisions: dict[tuple[str, str], str] = {}
        for b, keys in groups.items():
            if len(keys) == 1:
                ids[keys[0]] = b
                continue
            def rank(skey):            # quem fica com o id: participante do Moodle, depois o nome exato
                exact = skey[0] == b or (skey[1] and f"{skey[0]}_{skey[1]}" == b)
                return (not skey[1], not exact, skey)
            keys = sorted(keys, key=rank)
            owner = keys[0] if rank(keys[0])[1] is False else None
            for skey in keys:
                ids[skey] = b if skey == owner else f"{b}-{_short_hash(skey[0] + chr(0) + skey[1])}"
            names = ", ".join(repr(_display(k)) for k in keys)
            for skey in keys:
                self.collisions[skey] = (f"id repetido: {names} dariam o mesmo id {b!r}; "
                                         f"esta entrega ficou com o id {ids[skey]!r} (confira quem é quem)")
        taken: set[str] = set()
        for skey in sorted(ids, key=lambda k: (ids[k] != base[k], k)):   # garantia final: ids únicos
            sid = ids[skey]
            n = 2
            while sid in taken:
                sid, n = f"{ids[skey]}~{n}", n + 1
            ids[skey] = sid
            taken.add(sid)
        return ids

    def result(self) -> list[Submission]:
        ids = self.student_ids()
        out = []
        skipped = 0
        for (skey, a), sub in self.subs.items():
            sub.student = ids[skey]
            if skey in self.collisions:
                sub.notes.append(self.collisions[skey])
            if sub.skipped:
                skipped += 1
                sub.notes.append(_skipped_note(sub.skipped))
            out.append(sub)
        if skipped:
            self.warnings.append(f"{skipped} entrega(s) com arquivos além dos notebooks: eles não foram "
                                 "extraídos nem copiados (a correção só usa os notebooks; veja as "
                                 "observações de cada linha)")
        for skey, why in sorted(self.collisions.items()):
            self.warnings.append(why)
        return sorted(out, key=lambda s: (s.student, s.assignment))


def _display(skey: tuple[str, str]) -> str:
    name, participant = skey
    return f"{name} (participante {participant})" if participant else name


# Prazos e política de atraso: core/deadlines.py (Deadlines, load_deadlines).


def _skipped_note(skipped: dict[str, int]) -> str:
    names = sorted(skipped)
    shown = ", ".join(names[:5]) + (f" e mais {len(names) - 5}" if len(names) > 5 else "")
    return (f"{len(names)} arquivo(s) além dos notebooks ficaram de fora (a correção só usa os "
            f"notebooks; {mib(sum(skipped.values()))} declarados): {shown}")


def pick_notebook_name(names, name: str, expected: list[str]) -> tuple[str | None, str | None]:
    """O arquivo (nome relativo) do notebook `name`; aceita um único .ipynb com outro nome
    (renomeado). Só olha os nomes: nada é lido."""
    names = list(names)
    if f"{name}.ipynb" in names:
        return f"{name}.ipynb", None
    nbs = [k for k in names if k.endswith(".ipynb") and "/" not in k
           and k[:-6] not in expected]
    if len(expected) == 1 and len(nbs) == 1:
        return nbs[0], f"notebook com outro nome ({nbs[0]}) usado como {name}.ipynb"
    if nbs:
        return None, f"{name}.ipynb não encontrado (veio: {', '.join(sorted(nbs))})"
    return None, None


def pick_notebook(files, name: str, expected: list[str]) -> tuple[bytes | None, str | None]:
    """Os bytes do notebook `name`; aceita um único .ipynb com outro nome (renomeado)."""
    rel, note = pick_notebook_name(files, name, expected)
    return (files[rel] if rel is not None else None), note
