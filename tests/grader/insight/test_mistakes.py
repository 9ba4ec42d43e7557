"""Os erros da turma (autograder/insight/mistakes.py) e o HTML/CSV deles e da semelhança
(autograder/insight/render.py), numa turma sintética: metade da turma comete o mesmo erro
com números diferentes na mensagem, e ele aparece como um só, com a seção a reler; nada da
parte oculta aparece."""

from __future__ import annotations

import random
import statistics

import pytest

from autograder.insight.mistakes import (
    HIDDEN_FAILURE, TestOutcome, analyze, headline, normalize_message,
)
from autograder.insight.render import (
    csv_text, fmt_num, mistakes_html, mistakes_rows, similarity_html, similarity_rows, task_rows, pass_rate_rows,
)
from autograder.insight.similarity import Fragment, SimilarPair

CANARIO = "SEGREDO_OCULTO_42"
SECOES = {"teste-softmax": "Capítulo 2, seção 2.3 (softmax estável)",
          "teste-mascara": "Capítulo 3, seção 3.1 (a máscara causal)"}
RESPOSTA_ERRADA = "def softmax(x):\n    e = torch.exp(x)\n    return e / e.sum(-1, keepdim=True)\n"
RESPOSTA_CERTA = "def softmax(x):\n    e = torch.exp(x - x.amax(-1, keepdim=True))\n    return e / e.sum(-1, keepdim=True)\n"


def _turma(n: int = 20, seed: int = 0):
    rng = random.Random(seed)
    outs, answers = [], {}
    for i in range(n):
        aluno = f"aluno{i:02d}"
        errou = i < n // 2                       # metade comete o mesmo erro
        fonte = RESPOSTA_ERRADA if errou else RESPOSTA_CERTA
        answers[aluno] = {"Tarefa 1 — softmax": f"# tentativa {i % 3} de {aluno}\n" + fonte if errou else fonte}
        if errou:
            msg = (f"Traceback (most recent call last):\n  File \"<teste>\", line 3\n"
                   f"AssertionError: maior diferença: {rng.uniform(0, 1):.2f}".replace(".", ",")
                   + f" na posição ({rng.randint(0, 7)}, {rng.randint(0, 7)})")
            outs.append(TestOutcome(aluno, "Tarefa 1 — softmax", "teste-softmax", 0.0, 2.0, False, False, msg))
        else:
            outs.append(TestOutcome(aluno, "Tarefa 1 — softmax", "teste-softmax", 2.0, 2.0, True, True, ""))
        # tarefa 2: alguns falham só na parte oculta; o chamador (por engano) mandou a saída
        # inteira da célula, com o canário da parte oculta, como "mensagem visível"
        oculta_ok = (i % 4 != 0)
        outs.append(TestOutcome(aluno, "Tarefa 2 — máscara", "teste-mascara", 1.0 + oculta_ok, 2.0,
                                True, oculta_ok, "" if oculta_ok else f"entrada oculta: {CANARIO}"))
    return outs, answers


def test_metade_da_turma_no_mesmo_erro_vira_um_so():
    outs, answers = _turma()
    res = analyze(outs, sections=SECOES, answers=answers)
    soft = [m for m in res.mistakes if m.grade_id == "teste-softmax"]
    assert len(soft) == 1
    m = soft[0]
    assert m.count == 10 and not m.hidden
    assert m.template == "maior diferença: # na posição (…)"
    assert m.section == SECOES["teste-softmax"]
    assert len(m.examples) == 2 and len(set(m.examples)) == 2
    assert all("torch.exp" in e for e in m.examples)
    assert res.mistakes[0] is m                       # o mais comum primeiro


def test_parte_oculta_nunca_aparece():
    outs, answers = _turma()
    res = analyze(outs, sections=SECOES, answers=answers)
    oc = [m for m in res.mistakes if m.grade_id == "teste-mascara"]
    assert len(oc) == 1 and oc[0].hidden and oc[0].template == HIDDEN_FAILURE and oc[0].count == 5
    html = mistakes_html(res, assignment="01-softmax")
    texto = html + csv_text(mistakes_rows(res, "01")) + csv_text(pass_rate_rows(res, "01"))
    assert CANARIO not in texto and CANARIO not in repr(res)
    assert HIDDEN_FAILURE in html
    with pytest.raises(TypeError):
        TestOutcome("a", "t", "g", 0.0, 1.0, True, False, "", hidden_message="x")  # type: ignore[call-arg]


def test_nomes_dos_alunos_fora_do_html_e_do_csv_dos_erros():
    outs, answers = _turma()
    res = analyze(outs, sections=SECOES, answers=answers)
    texto = mistakes_html(res, assignment="01") + csv_text(mistakes_rows(res, "01"))
    assert "aluno0" not in texto and "aluno1" not in texto
    assert "«aluno»" in "".join(res.mistakes[0].examples)     # o nome no comentário também some


def test_taxas_visivel_e_oculta_separadas():
    outs, _ = _turma()
    res = analyze(outs)
    by = {s.grade_id: s for s in res.tests}
    assert by["teste-softmax"].visible_rate == 0.5 and by["teste-softmax"].hidden_rate == 0.5
    assert by["teste-mascara"].visible_rate == 1.0 and by["teste-mascara"].hidden_rate == 0.75
    assert by["teste-mascara"].hidden_n == 20


def test_discriminacao_contra_statistics():
    """A correlação item-resto, conferida contra statistics.correlation em notas aleatórias."""
    rng = random.Random(3)
    for _ in range(20):
        n = rng.randint(3, 40)
        outs = []
        for i in range(n):
            for t in range(3):
                pts = float(rng.choice([0, 1, 2]))
                outs.append(TestOutcome(f"s{i}", f"T{t}", f"g{t}", pts, 2.0, pts > 0, None, "x"))
        res = analyze(outs)
        for ts in res.tasks:
            item = [sum(o.points for o in outs if o.student == f"s{i}" and o.task == ts.task) for i in range(n)]
            total = [sum(o.points for o in outs if o.student == f"s{i}") for i in range(n)]
            rest = [a - b for a, b in zip(total, item)]
            if len(set(item)) < 2 or len(set(rest)) < 2:
                assert ts.discrimination is None
            else:
                assert ts.discrimination == pytest.approx(statistics.correlation(item, rest), abs=1e-9)


def test_discriminacao_sem_variacao_e_turma_pequena():
    outs = [TestOutcome(f"s{i}", "T", "g", 1.0, 1.0, True, None) for i in range(5)]
    assert analyze(outs).tasks[0].discrimination is None
    assert analyze(outs[:2]).tasks[0].discrimination is None


@pytest.mark.parametrize("msg,esperado", [
    ("maior diferença: 0,98 na posição (2, 3)", "maior diferença: # na posição (…)"),
    ("forma errada: torch.Size([2, 4, 8]) em vez de torch.Size([2, 8])", "forma errada: (…) em vez de (…)"),
    ("a função 'pesos' devolveu 3 valores", "a função «…» devolveu # valores"),
    ("Traceback:\n  x\nValueError: esperava 1e-05, veio -3.5", "esperava #, veio #"),
    ("formas 2 x 3 e 4×4", "formas (…) e (…)"),
    ("", ""),
])
def test_normalizacao_das_mensagens(msg, esperado):
    assert normalize_message(msg) == esperado


def test_headline():
    assert headline("linha 1\nlinha 2") == "linha 1"
    assert headline("Traceback\n  File x\nAssertionError") == "AssertionError"
    assert headline("a\nbiblioteca.ErroDeForma: forma") == "a"
    assert headline("Traceback\nKeyError: 'x'") == "'x'"


def test_formato_brasileiro_e_csv():
    assert fmt_num(1234.5, 1) == "1.234,5"
    assert fmt_num(0.123, 2) == "0,12"
    assert csv_text([["a", 0.5, None, 3]]) == "a;0,5000;;3\n"
    assert csv_text([["a", 0.5]], sep=",", decimal=".") == "a,0.5000\n"


def test_html_da_semelhanca_escapa_tudo():
    frag = Fragment("c<1>", (1, 2), (5, 5), "x = '<script>'\ny = 1", "z = '<script>'")
    par = SimilarPair("<b>ana</b>", "bruno & cia", 0.875, 0.5, 12, (frag,))
    html = similarity_html([par], assignment="01 <x>", threshold=0.5, students=30)
    assert "<script>" not in html and "<b>ana" not in html
    assert "&lt;b&gt;ana&lt;/b&gt;" in html and "bruno &amp; cia" in html
    assert "87,5\u00a0%" not in html and "88\u00a0%" in html and "50\u00a0%" in html
    assert "não</strong> prova cópia" in html and "nunca um veredito" in html
    assert "linhas 1–2" in html and "linha 5" in html
    rows = similarity_rows([par], "01")
    assert rows[1][:6] == ["01", "<b>ana</b>", "bruno & cia", 0.875, 0.5, 12]
    assert rows[1][7] == "c<1>:1-2~5-5"
    vazio = similarity_html([], assignment="01", threshold=0.5)
    assert "Nenhum par" in vazio and "nunca um veredito" in vazio


def test_tarefas_media_e_maximo():
    outs, _ = _turma()
    res = analyze(outs)
    t1 = next(t for t in res.tasks if t.task.startswith("Tarefa 1"))
    assert t1.mean == 1.0 and t1.max_points == 2.0 and t1.n == 20
    rows = task_rows(res, "01")
    assert rows[0] == ["assignment", "task", "mean", "max_points", "discrimination", "students"]
