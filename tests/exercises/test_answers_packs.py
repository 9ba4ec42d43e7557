"""Os pacotes de respostas da turma do corretor (`answers.cli.packs`) não escondem o veredito
de nenhuma resposta: cada pacote junta só respostas que não se atrapalham, e a conferência de
uma resposta ignora apenas as células que outra plantada do mesmo pacote zera."""

from __future__ import annotations

import csv

import pytest

from answers import Fair, Planted, cases, cli


def _by_slug():
    out = {}
    for slug, _, _, a in cases():
        out.setdefault(slug, []).append(a)
    return out


@pytest.mark.parametrize("slug", sorted(_by_slug()))
def test_every_answer_is_in_exactly_one_pack_of_compatible_answers(slug):
    answers = _by_slug()[slug]
    packs = cli.packs(slug, answers)
    flat = [a for p in packs for a in p]
    assert len(flat) == len(answers) and all(any(a is b for b in flat) for a in answers)
    for p in packs:
        assert len({type(a) for a in p}) == 1, "plantadas e justas nunca no mesmo pacote"
        for i, a in enumerate(p):
            for b in p[i + 1:]:
                assert not set(a.cells) & set(b.cells), (a.why, b.why)
                if isinstance(a, Planted):
                    assert not (set(a.zero) | set(a.free)) & (set(b.zero) | set(b.free)), (a.why, b.why)


def _questions(ws, rows):
    ws.mkdir(parents=True, exist_ok=True)
    with open(ws / "questions.csv", "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, ["student_id", "assignment", "grade_id", "kind", "score", "max_score"])
        w.writeheader()
        for sid, gid, score in rows:
            w.writerow({"student_id": sid, "assignment": "01-x", "grade_id": gid, "kind": "test",
                        "score": str(score).replace(".", ","), "max_score": "2"})


def test_a_packed_planted_answer_is_judged_by_its_own_contract(tmp_path):
    a = Planted("a", {"sol_a": ""}, zero=("test_a",))
    b = Planted("b", {"sol_b": ""}, zero=("test_b",))
    who = {"pack0-01-x": ("01-x", (a, b))}
    _questions(tmp_path, [("pack0-01-x", "test_a", 0), ("pack0-01-x", "test_b", 0), ("pack0-01-x", "test_c", 2)])
    assert cli.problems(who, tmp_path) == []
    # `a` ganhou pontos na própria tarefa: só a conferência de `a` acusa
    _questions(tmp_path, [("pack0-01-x", "test_a", 1), ("pack0-01-x", "test_b", 0), ("pack0-01-x", "test_c", 2)])
    assert [p for p in cli.problems(who, tmp_path, only=a)] and not cli.problems(who, tmp_path, only=b)
    # uma tarefa que ninguém do pacote pode zerar caiu: as duas respostas acusam
    _questions(tmp_path, [("pack0-01-x", "test_a", 0), ("pack0-01-x", "test_b", 0), ("pack0-01-x", "test_c", 0)])
    assert len(cli.problems(who, tmp_path)) == 2


def test_a_packed_fair_answer_must_keep_every_point(tmp_path):
    a, b = Fair("a", {"sol_a": ""}), Fair("b", {"sol_b": ""})
    who = {"pack0-01-x": ("01-x", (a, b))}
    _questions(tmp_path, [("pack0-01-x", "test_a", 2), ("pack0-01-x", "test_b", 1)])
    assert len(cli.problems(who, tmp_path)) == 2


def test_the_packed_class_has_one_notebook_per_pack_with_every_answer_in_it(tmp_path):
    import nbformat

    slug = "05-mistura-com-v"
    who = cli.build_class(tmp_path, {slug}, pack=True)
    answers = _by_slug()[slug]
    assert len(who) == len(cli.packs(slug, answers))
    assert sorted(id(a) for _, group in who.values() for a in group) == sorted(id(a) for a in answers)
    for sid, (s, group) in who.items():
        nb = nbformat.read(tmp_path / sid / s / f"{s}.ipynb", as_version=4)
        sources = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in nb.cells}
        for a in group:
            assert all(sources[g] == code for g, code in a.cells.items()), (sid, a.why)
        assert cli.student_of(who, group[0]) == sid
