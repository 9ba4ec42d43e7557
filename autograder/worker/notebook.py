"""Correção de um notebook de uma entrega (uma tarefa do Dask, ver tasks.py).

1. os bytes entregues (`tasks.GradeTask.raw`): ausente -> `missing`; não UTF-8, JSON
   quebrado ou fora do formato -> `invalid-notebook` (nota 0, nada executa);
2. `integrity.restore_locked_cells` (contra a versão distribuída);
3. pré-processadores do nbgrader sobre o gradebook local do trabalhador (a
   semente de gradebook.seed_bytes: as células e os testes ocultos, nenhum aluno): ClearOutput,
   DeduplicateIds, OverwriteKernelspec, OverwriteCells (devolve os testes
   ocultos a partir do gradebook), CheckCellMetadata;
4. `executor.execute_notebook` em dois kernels da sandbox (o do aluno e o do
   corretor, que roda os testes; ver executor.py);
5. LimitOutput e SaveAutoGrades do nbgrader (a regra de nota do nbgrader:
   erro numa célula de teste = 0; as saídas dos testes vêm do kernel do
   corretor), e as notas lidas do gradebook local;
6. devolve o `NotebookResult` (core/results.py) e o notebook executado; quem
   planeja (plan/runner.py) grava `autograded/<aluno>/<tarefa>/<nb>.ipynb`, junta os
   notebooks da entrega num `JobResult` e o grava em `.autograder/results/`
   (a base da retomada).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import nbformat
from atencao.fmt import integer

from ..core import gradeboard, nbmeta
from . import cellcode, integrity
from ..core.workspace import AssignmentInfo, Workspace, nbgrader_config
from .executor import ExecOutcome, execute_notebook
from ..core.settings import ExecSettings
from ..box.kernel import KernelStartError, SandboxKernel, harness_start_code, reset_harness, student_stub_code
from ..core.results import NotebookResult, QuestionResult, Status, TestPart, worst


# O notebook entregue é lido no processo de correção, fora das cotas da caixa: quantas células
# e quanto código ele pode ter é decidido antes de o nbformat montar os objetos e de a árvore
# sintática ser construída (a AST de `x = 1` repetido ocupa ~400 vezes o texto: 11 MiB de
# código levavam o processo a 4,7 GiB). Os notebooks do curso têm até 24 células e nenhuma
# célula de código acima de 27 mil caracteres.
MAX_CELLS = 1_000
MAX_CELL_CODE = 100_000       # caracteres numa célula de código
MAX_CODE = 500_000            # caracteres de código no notebook inteiro
MAX_TEXT = 2_000_000          # caracteres em todas as células (código, texto e brutas)
MAX_DEPTH = 64                # níveis de listas e objetos do JSON (um notebook tem ~6; o
                              # copy.deepcopy da restauração estoura a pilha perto de 330)


def _source_len(cell: dict) -> int:
    src = cell.get("source", cell.get("input", ""))       # "input": código no nbformat 3
    if isinstance(src, list):
        return sum(len(s) for s in src if isinstance(s, str))
    return len(src) if isinstance(src, str) else 0


def _cells(data: dict) -> list:
    """As células do JSON (no nbformat 3, dentro de "worksheets")."""
    if isinstance(data.get("cells"), list):
        return data["cells"]
    return [c for w in data.get("worksheets", []) if isinstance(w, dict)
            for c in (w.get("cells") if isinstance(w.get("cells"), list) else [])]


def _drop_outputs(cells: list) -> None:
    """As saídas entregues saem antes de o nbformat lê-las: a correção as refaz, então nenhuma
    precisa ser válida nem ocupar memória."""
    for cell in cells:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
            cell.pop("prompt_number", None)             # o número da execução no nbformat 3


def _too_big(data: dict, cells: list) -> str | None:
    """Motivo em português se o notebook (já sem as saídas) passa dos limites acima."""
    if len(cells) > MAX_CELLS:
        return f"notebook com {integer(len(cells))} células; o limite é {integer(MAX_CELLS)}"
    code = text = 0
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        n = _source_len(cell)
        text += n
        if cell.get("cell_type") == "code":
            code += n
            if n > MAX_CELL_CODE:
                return (f"célula {i + 1} com {integer(n)} caracteres de código; o limite por célula é "
                        f"{integer(MAX_CELL_CODE)}")
    if _depth(data) > MAX_DEPTH:
        return f"JSON com mais de {MAX_DEPTH} níveis de listas e objetos aninhados"
    if code > MAX_CODE:
        return f"{integer(code)} caracteres de código no notebook; o limite é {integer(MAX_CODE)}"
    if text > MAX_TEXT:
        return f"{integer(text)} caracteres nas células; o limite é {integer(MAX_TEXT)}"
    return None


def _depth(data) -> int:
    """Profundidade do JSON (sem recursão), parando logo que passa de MAX_DEPTH."""
    deepest, stack = 0, [(data, 1)]
    while stack and deepest <= MAX_DEPTH:
        obj, d = stack.pop()
        if isinstance(obj, (dict, list)):
            deepest = max(deepest, d)
            stack.extend((v, d + 1) for v in (obj.values() if isinstance(obj, dict) else obj))
    return deepest


def load_notebook(raw: bytes):
    """(notebook, None) ou (None, motivo em português)."""
    if len(raw) > 50 * 1024 * 1024:
        return None, "arquivo grande demais (mais de 50 MiB)"
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        return None, f"o arquivo não está em UTF-8 (byte inválido 0x{raw[e.start]:02x} na posição {e.start})"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        return None, f"JSON inválido (linha {e.lineno}, coluna {e.colno}: {e.msg})"
    except RecursionError:          # o leitor do json conta os níveis e para antes da pilha
        return None, f"JSON com mais de {MAX_DEPTH} níveis de listas e objetos aninhados"
    if not isinstance(data, dict) or not isinstance(data.get("cells", data.get("worksheets")), list):
        return None, "não é um notebook do Jupyter (falta a lista de células)"
    cells = _cells(data)
    _drop_outputs(cells)
    too_big = _too_big(data, cells)
    if too_big:
        return None, too_big
    # nbformat 4.0-4.4 com ids nas células (o que `nbformat.v4.new_code_cell` escreve, e o
    # Jupyter abre): os ids só existem a partir de 4.5, então o notebook passa a 4.5
    if data.get("nbformat") == 4 and isinstance(data.get("nbformat_minor"), int) \
            and data["nbformat_minor"] < 5 and any(isinstance(c, dict) and "id" in c for c in data["cells"]):
        data["nbformat_minor"] = 5
        import re
        import uuid
        seen: set = set()
        for c in data["cells"]:
            if isinstance(c, dict):
                cid = c.get("id")
                if not (isinstance(cid, str) and re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", cid)) or cid in seen:
                    c["id"] = cid = uuid.uuid4().hex[:8]
                seen.add(cid)
    text = json.dumps(data)          # sem as saídas entregues (_drop_outputs)
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as e:  # noqa: BLE001
        return None, f"notebook ilegível pelo nbformat: {type(e).__name__}: {str(e)[:200]}"
    for i, cell in enumerate(nb.cells):
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            return None, f"célula {i + 1} com tipo inválido"
        if not isinstance(cell.get("source", ""), str):
            return None, f"célula {i + 1} sem texto válido"
        if not isinstance(cell.get("metadata"), dict):
            cell.metadata = nbformat.NotebookNode()
    try:
        from nbformat.validator import normalize
        _, fixed = normalize(nb, strip_invalid_metadata=True)   # ids repetidos, metadados inválidos
        nb = nbformat.from_dict(fixed)
        nbformat.validate(nb)
    except Exception as e:  # noqa: BLE001
        return None, f"notebook fora do formato nbformat 4: {str(e).splitlines()[0][:200]}"
    return nb, None


@functools.cache
def _check_cell_metadata():
    """O CheckCellMetadata do nbgrader com o mesmo validador (`MetadataValidator`), mas cada
    validação que passou guardada por (tipo da célula, metadados): as células da versão
    distribuída chegam iguais em todo notebook, e o jsonschema conferia o próprio esquema a
    cada célula (0,1 s por notebook no perfil). Um erro nunca é guardado: a célula é validada
    de novo e o erro é o do nbgrader."""
    from nbgrader.nbgraderformat import MetadataValidator, ValidationError
    from nbgrader.preprocessors import CheckCellMetadata

    passed: set[tuple[str, str]] = set()

    class Validator(MetadataValidator):
        def validate_cell(self, cell) -> None:
            meta = cell.metadata.get("nbgrader")
            key = (cell.cell_type, json.dumps(meta, sort_keys=True, default=str)) if meta else None
            if key is not None and key in passed:
                return
            super().validate_cell(cell)
            if key is not None:
                if len(passed) >= 4096:       # metadados que o aluno escreveu: o conjunto tem limite
                    passed.clear()
                passed.add(key)

    class Check(CheckCellMetadata):
        def preprocess(self, nb, resources):
            try:
                Validator().validate_nb(nb)
            except ValidationError as e:
                self.log.error("metadados do nbgrader inválidos: %s", e)
                raise ValidationError("Notebook failed to validate; the nbgrader metadata may be corrupted.") from e
            return nb, resources

    return Check


def _run_nbgrader(preprocessors, nb, resources, config):
    for cls in preprocessors:
        pp = cls(config=config)
        pp.log.setLevel(logging.ERROR)
        nb, resources = pp.preprocess(nb, resources)
    return nb, resources


def _zero_questions(info: AssignmentInfo, name: str) -> list[QuestionResult]:
    return [QuestionResult.zero(c) for c in info.cells[name]]


def _touches_environment(node) -> bool:
    """O comando mexe em variáveis de ambiente ou em sys.path (muda o efeito de um import)?"""
    import ast
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and n.attr in ("environ", "putenv", "unsetenv", "path") \
                and isinstance(n.value, ast.Name) and n.value.id in ("os", "sys", "_os", "_sys"):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in (
                "run_line_magic", "run_cell_magic") and n.args and isinstance(n.args[0], ast.Constant) \
                and n.args[0].value in ("env", "set_env"):
            return True
    return False


# Só estes pacotes são importados antes do notebook: são os caros (~1 s de CPU) e não
# dependem de nada que o kernel ou o notebook configure. O matplotlib, por exemplo,
# escolhe o backend ao ser importado (o ipykernel define MPLBACKEND=inline ao iniciar),
# e o triton lê TRITON_INTERPRET.
WARM_ALLOWED = ("numpy", "torch")


def warm_modules(release_nb, unsafe: bool = False) -> list[str]:
    """Módulos que as células travadas importam e que podem ser importados antes da hora.

    Para no primeiro comando que mexe no ambiente (p.ex. TRITON_INTERPRET=1 antes de
    `import triton`): daí em diante, importar antes mudaria o comportamento.
    unsafe=True devolve os outros, os importados depois disso."""
    import ast
    safe: list[str] = []
    later: list[str] = []
    stopped = False
    for cell in release_nb.cells:
        if cell.cell_type != "code" or not nbmeta.is_locked(cell):
            continue
        tree = nbmeta.parse_cached(cell.source)
        if tree is None:
            stopped = True
            continue
        for node in tree.body:
            if _touches_environment(node):
                stopped = True
            found = []
            if isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found = [node.module]
            (later if stopped else safe).extend(found)
    if unsafe:
        return list(dict.fromkeys(later))
    return [m for m in dict.fromkeys(safe) if m.split(".")[0] in WARM_ALLOWED]


def prepare_run_dir(ws: Workspace, a: str, files: dict[str, bytes], run_dir: Path | None = None) -> Path:
    """Pasta do kernel: arquivos do aluno (menos notebooks) e, por cima, os da versão distribuída."""
    run_dir = run_dir or ws.run_dir()
    (run_dir / "trabalho").mkdir(parents=True)
    (run_dir / "home").mkdir()
    run_dir.chmod(0o755)
    for rel, data in files.items():
        if rel.endswith(".ipynb"):
            continue
        p = run_dir / "trabalho" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    for f in ws.release(a).rglob("*"):
        if f.is_file() and f.suffix != ".ipynb":
            p = run_dir / "trabalho" / f.relative_to(ws.release(a))
            p.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(f, p)
    mpl = ws.mpl_cache
    if mpl.is_dir():
        shutil.copytree(mpl, run_dir / "home" / ".matplotlib")
    return run_dir


# Kernel do corretor reaproveitado: no máximo este número de notebooks por processo, e só
# enquanto o pico de memória dele fica abaixo desta fração do limite de memória do notebook.
MAX_HARNESS_USES = 20
MAX_HARNESS_MEMORY = 0.5
# Quantas (tarefa, notebook) mantêm kernels aquecidos ao mesmo tempo (as mais recentes): o
# corretor manda as entregas aluno por aluno, então as tarefas se alternam num processo.
MAX_WARM_KEYS = 3


@dataclass
class PoolStats:
    """Contagem de kernels de um KernelPool (testes, bench e o log do processo de correção)."""

    student_starts: int = 0
    harness_starts: int = 0
    harness_reuses: int = 0                                # notebooks servidos por um corretor já usado
    recycled: list[str] = field(default_factory=list)     # por que um kernel do corretor foi encerrado


class KernelPool:
    """O ciclo de vida dos kernels de um processo de correção, um notebook por `execute`.

    - Kernel do aluno: sempre novo. Assim que um notebook pega o seu, o próximo já começa
      a subir (mesma tarefa e notebook, sem arquivos extras: como root, `trabalho/` é um
      tmpfs copiado na partida e não recebe arquivos depois). Um notebook de outra
      (tarefa, notebook) descarta o aquecido; uma entrega com arquivos além dos notebooks
      usa um kernel novo com eles (o aquecido fica para o próximo). Ficam aquecidos os
      kernels das MAX_WARM_KEYS (tarefa, notebook) usadas por último; os de uma mais antiga
      são encerrados quando outra chega.
    - Kernel do corretor: só roda código do professor, então serve ao próximo notebook da
      mesma (tarefa, notebook) se TODAS as regras valem: nada aconteceu com ele neste
      notebook (tempo estourado, interrupção, morte, falta de memória: `harness_trouble`),
      nenhuma bandeira, menos de MAX_HARNESS_USES notebooks servidos, e no próprio kernel
      (`harness_side.reset_for_next`): o aluno não recebeu alça de objeto do corretor nem
      alterou objeto dele, pico de memória abaixo de MAX_HARNESS_MEMORY do limite, estado
      global igual ao da partida. Depois ele é zerado (IPython, ambiente, sementes) e recebe
      um `_autograder_harness` novo; as células travadas rodam de novo, como num kernel novo.
      Senão, é encerrado e um novo começa a subir. `ExecSettings.reuse_harness=False` desliga.
    """

    def __init__(self, ws: Workspace, settings: ExecSettings):
        self.ws = ws
        self.settings = settings
        self.stats = PoolStats()
        self._students: dict[tuple, asyncio.Future] = {}    # chave -> kernel do aluno aquecido
        self._harnesses: dict[tuple, asyncio.Future] = {}   # chave -> kernel do corretor pronto
        self._recent: list[tuple] = []                         # chaves, da usada há mais tempo à última
        self._warm: dict[tuple, list[str]] = {}                # chave -> warm_modules da versão distribuída

    @staticmethod
    def _key(info: AssignmentInfo, name: str) -> tuple:
        return (info.name, name, info.source_hash)

    def _start(self, info: AssignmentInfo, name: str, files: dict[str, bytes], harness: bool) -> asyncio.Future:
        """Começa a subir um kernel (com a sua pasta); o futuro dá o kernel pronto ou KernelStartError."""
        run_dir = prepare_run_dir(self.ws, info.name, {} if harness else files)
        kernel = SandboxKernel(run_dir, [str(self.ws.kernels_dir)])
        inject = harness_start_code() if harness else student_stub_code()
        if harness:
            self.stats.harness_starts += 1
        else:
            self.stats.student_starts += 1

        key = self._key(info, name)
        if key not in self._warm:
            self._warm[key] = warm_modules(info.release[name])
        warm = self._warm[key]

        async def go() -> SandboxKernel:
            try:
                await kernel.start(self.settings.startup_timeout, warm, inject)
            except BaseException:       # inclusive cancelamento (tempo da tarefa): nada fica rodando
                await kernel.shutdown()
                shutil.rmtree(run_dir, ignore_errors=True)
                raise
            return kernel
        return asyncio.ensure_future(go())

    async def _retire(self, kernel: SandboxKernel) -> None:
        try:
            await kernel.shutdown()
        finally:
            shutil.rmtree(kernel.run_dir, ignore_errors=True)

    async def _dispose(self, fut: asyncio.Future) -> None:
        """Encerra um kernel aquecido que não vai ser usado (como quer que a partida tenha ido)."""
        try:
            kernel = await fut
        except BaseException:  # noqa: BLE001 - a partida falhou: não há kernel (a pasta já foi limpa)
            return
        await self._retire(kernel)

    async def _reset(self, info: AssignmentInfo, name: str, kernel: SandboxKernel) -> SandboxKernel:
        why = await reset_harness(kernel, self.settings.startup_timeout, MAX_HARNESS_MEMORY)
        if why is None:
            return kernel
        self.stats.recycled.append(f"{name}: {why}")
        await self._retire(kernel)
        return await self._start(info, name, {}, harness=True)

    def _why_not_reuse(self, outcome: ExecOutcome, harness: SandboxKernel) -> str | None:
        """As regras vistas de fora do kernel; None = pode ir para o reset."""
        if not self.settings.reuse_harness:
            return "reaproveitamento desligado"
        if outcome.harness_trouble:
            return "; ".join(outcome.harness_trouble)
        if outcome.flags:
            return "notebook com bandeira"
        if harness.uses >= MAX_HARNESS_USES:
            return f"já serviu a {harness.uses} notebooks"
        box = harness.box
        if box is not None and box.memory_exceeded():
            return "falta de memória na caixa"
        return None

    async def execute(self, info: AssignmentInfo, name: str, files: dict[str, bytes], nb,
                      warm_next: bool = True, hidden_seed: int | None = None) -> ExecOutcome:
        """Roda `nb` (já restaurado e pré-processado; as saídas mudam) num kernel do aluno novo e
        num do corretor (novo ou zerado); levanta KernelStartError se eles não sobem.

        warm_next=False: quem planeja sabe que este processo não vai corrigir outro notebook
        igual (era o último da fila): nada é aquecido para ele, e o kernel do corretor acaba aqui."""
        key = self._key(info, name)
        self._recent = [k for k in self._recent if k != key] + [key]
        for old in self._recent[:-MAX_WARM_KEYS]:               # a (tarefa, notebook) mais antiga
            for pool in (self._students, self._harnesses):
                if old in pool:
                    await self._dispose(pool.pop(old))
        self._recent = self._recent[-MAX_WARM_KEYS:]
        extra = {k: v for k, v in files.items() if not k.endswith(".ipynb")}
        student_f = None if extra else self._students.pop(key, None)
        student_f = student_f or self._start(info, name, extra, harness=False)
        harness_f = self._harnesses.pop(key, None) or self._start(info, name, {}, harness=True)
        if key not in self._students and warm_next:              # o próximo já começa a subir
            self._students[key] = self._start(info, name, {}, harness=False)
        if not self.settings.reuse_harness and warm_next:
            self._harnesses[key] = self._start(info, name, {}, harness=True)
        got = await asyncio.gather(student_f, harness_f, return_exceptions=True)
        errors = [g for g in got if isinstance(g, BaseException)]
        if errors:
            for g in got:
                if isinstance(g, SandboxKernel):
                    await self._retire(g)
            if isinstance(errors[0], KernelStartError) or not isinstance(errors[0], Exception):
                raise errors[0]
            raise KernelStartError(f"o kernel não iniciou: {type(errors[0]).__name__}: {errors[0]}") from errors[0]
        student, harness = got
        self.stats.harness_reuses += harness.uses > 0
        harness.uses += 1
        try:
            outcome = await execute_notebook(nb, student, harness, self.settings, keep_harness=True,
                                             release=info.release[name], hidden_seed=hidden_seed)
        except BaseException:
            await asyncio.gather(self._retire(student), self._retire(harness), return_exceptions=True)
            raise
        shutil.rmtree(student.run_dir, ignore_errors=True)
        why = self._why_not_reuse(outcome, harness) if warm_next else "último notebook igual neste processo"
        if why is None:
            self._harnesses[key] = asyncio.ensure_future(self._reset(info, name, harness))
        else:
            self.stats.recycled.append(f"{name}: {why}")
            await self._retire(harness)
            if key not in self._harnesses and warm_next:
                self._harnesses[key] = self._start(info, name, {}, harness=True)
        return outcome

    async def close(self) -> None:
        """Encerra todos os kernels aquecidos ou guardados."""
        for pool in (self._students, self._harnesses):
            while pool:
                await self._dispose(pool.pop(next(iter(pool))))


async def grade_notebook(ws: Workspace, info: AssignmentInfo, task, shard_url: str,
                         settings: ExecSettings, pool: "KernelPool", hidden_seed: int | None = None):
    """Corrige um notebook (`tasks.GradeTask`); devolve (NotebookResult, notebook executado ou None).

    `ws` é a pasta local de quem corrige (release/, kernels); nada é lido da pasta do
    professor nem escrito nela: quem planeja grava o resultado e o notebook. `hidden_seed`:
    a semente das entradas ocultas deste aluno (core/student_seed.py), só no kernel do corretor."""
    a, name, student = info.name, task.notebook, task.student
    res = NotebookResult(notebook=name, questions=_zero_questions(info, name))
    raw = task.raw
    if task.note:
        (res.notes if raw is not None else res.details).append(task.note)
    if raw is None:
        res.status = Status.MISSING
        res.details.insert(0, f"{name}.ipynb não foi entregue")
        return res, None
    nb, err = load_notebook(raw)
    if nb is None:
        res.status = Status.INVALID
        res.details.insert(0, f"{name}.ipynb: {err}")
        return res, None

    nb, issues = integrity.restore_locked_cells(nb, info.release[name],
                                                dict(getattr(task, "earlier_locked", ())))
    for it in issues:
        (res.details if it.kind == "tampered" else res.notes).append(it.message)
    tampered = any(it.kind == "tampered" for it in issues)
    # regras que rodam no processo do aluno: com evidência de contorno, revisão do professor (C4)
    res.flags += cellcode.tamper_evidence(cellcode.student_cells(nb, info.release[name]))

    import warnings

    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning
    # o nbgrader avisa de objetos fora da sessão ao salvar notas num gradebook novo: ruído
    warnings.filterwarnings("ignore", category=SAWarning, module=r"nbgrader(\..*)?$")
    from nbgrader.preprocessors import ClearOutput, DeduplicateIds, OverwriteCells, OverwriteKernelspec
    config = nbgrader_config(ws.root, shard_url)
    timestamp = datetime.fromisoformat(task.timestamp) if task.timestamp else None
    with Gradebook(shard_url) as gb:
        gb.update_or_create_student(student)
        ts = timestamp.astimezone(timezone.utc).replace(tzinfo=None) if timestamp else None
        gb.update_or_create_submission(a, student, timestamp=ts)
    resources = {"nbgrader": {"student": student, "assignment": a, "notebook": name,
                              "db_url": shard_url}}
    nb, resources = _run_nbgrader([ClearOutput, DeduplicateIds, OverwriteKernelspec,
                                   OverwriteCells, _check_cell_metadata()], nb, resources, config)

    try:
        outcome = await pool.execute(info, name, task.files, nb, warm_next=task.warm_next,
                                     hidden_seed=hidden_seed)
    except KernelStartError as e:
        res.status = Status.CRASHED
        res.details.append(f"o kernel não iniciou: {str(e).splitlines()[0][:300]}")
        return res, None
    res.seconds = round(outcome.seconds, 3)
    res.details += outcome.details
    res.flags += outcome.flags

    nb = score(nb, resources, config, res, outcome, tampered)
    return res, nb


def score(nb, resources: dict, config, res: NotebookResult, outcome: ExecOutcome, tampered: bool):
    """Onde se decidem os pontos e a situação de um notebook já executado (o mapa em
    autograder/__init__.py). Os pontos de cada questão são os do `SaveAutoGrades` do
    nbgrader, a partir das saídas das células de teste (cada parte já passou ou falhou em
    executor.py); a situação é a mais grave entre a da execução, a adulteração e as regras."""
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import LimitOutput, SaveAutoGrades
    ids = resources["nbgrader"]
    nb, resources = _run_nbgrader([LimitOutput, SaveAutoGrades], nb, resources, config)
    parts_by_id = {nbmeta.grade_id(c): TestPart.from_metadata(c.metadata.get("autograder"))
                   for c in nb.cells if nbmeta.grade_id(c)}
    with Gradebook(ids["db_url"]) as gb:
        for q in res.questions:
            g = gb.find_grade(q.grade_id, ids["notebook"], ids["assignment"], ids["student"])
            parts = parts_by_id.get(q.grade_id) or []
            vis = [p.passed for p in parts if p.hidden is False]
            hid = [p.passed for p in parts if p.hidden is True]
            q.score, q.needs_manual = g.auto_score, bool(g.needs_manual_grade)
            q.visible_passed = all(vis) if vis else None
            q.hidden_passed = all(hid) if hid else None
    # o placar do notebook é o da nota (o kernel do aluno não viu os testes; issue 41)
    gradeboard.fill(nb, [gradeboard.Line(q.title, q.kind, q.score, q.max_score, q.visible_passed,
                                         q.hidden_passed) for q in res.questions])
    statuses = [outcome.status]
    if tampered:
        statuses.append(Status.TAMPERED)
    if res.flags:
        statuses.append(Status.FLAGGED)
    res.status = worst(statuses)
    return nb
