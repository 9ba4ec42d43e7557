# Atenção causal, do produto escalar ao kernel — comandos do curso.
# Cada alvo faz a própria preparação numa máquina nova: ambiente virtual,
# pacotes fixados em requirements.txt e pacotes Debian (chromium, bubblewrap).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
# Python 3.11 ou 3.12: o python3 da máquina quando é um deles (o do Ubuntu
# 24.04 é o 3.12), senão python3.12 ou python3.11. `make PYTHON=...` escolhe outro.
PYTHON_OK := import sys; sys.exit(sys.version_info[:2] not in ((3, 11), (3, 12)))
PYTHON ?= $(or $(shell for p in python3 python3.12 python3.11; do $$p -c '$(PYTHON_OK)' 2>/dev/null && { echo $$p; break; }; done),python3)
# O índice de CPU do PyTorch (a roda torch==2.13.0+cpu de requirements.txt).
# Numa máquina que não o alcança (só o PyPI e uma pasta de rodas locais, como
# na CI deste projeto), ele sai da instalação: sem isso o pip tentaria de novo,
# ~10 s por pacote, e a roda +cpu tem de vir da pasta local (PIP_FIND_LINKS).
TORCH_INDEX := https://download.pytorch.org/whl/cpu
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.instalado
APT_STAMP := .cache/.apt-instalado
PORT ?= 8000
PDF := _build/pdf/atencao-causal.pdf
PUBLISH_REMOTE ?= origin
PUBLISH_BRANCH ?= gh-pages
EXERCICIOS ?= $(HOME)/atencao-exercicios
STUDENT_JUPYTER := .cache/jupyter-aluno
JOBS ?= 2
export PYTHONHASHSEED := 0
# O bin/ do ambiente primeiro no PATH: o nbgrader chama `alembic` pelo PATH.
export PATH := $(abspath $(VENV))/bin:$(PATH)
export OMP_NUM_THREADS ?= 2
# Sem espera ativa do OpenMP: numa máquina de 2 núcleos cheia de processos,
# threads girando em falso deixaram tempos 3-10x piores e instáveis.
export OMP_WAIT_POLICY ?= PASSIVE
# O livro e os testes rodam os kernels Triton no interpretador quando não há GPU.
export PYDEVD_DISABLE_FILE_VALIDATION := 1


.PHONY: test-venvs check check-atencao check-exercises check-grader check-book e2e e2e-grader e2e-nbgrader e2e-site e2e-env
.PHONY: all book test release serve bench grade clean deps apt-deps sandbox-deps help publish pdf lab-aluno student-config weights weights-check

help:
	@echo "make book     constrói o livro (HTML em _build/html), executando todos os capítulos"
	@echo "make check    a camada rápida dos testes (< 2 min; sem livro, navegador, sandbox, nbgrader nem pip)"
	@echo "make check-atencao | check-exercises | check-grader | check-book   só a parte que você mexeu"
	@echo "make e2e      todas as camadas lentas, em paralelo (precisa do livro construído)"
	@echo "make e2e-grader | e2e-nbgrader | e2e-site | e2e-env   as camadas lentas, uma por vez"
	@echo "make test     check e depois todas as camadas (o que a CI roda)"
	@echo "make release  regenera exercises/ a partir de solutions/"
	@echo "make serve    serve _build/html em http://localhost:$(PORT)"
	@echo "make bench    mede e grava bench/results.md"
	@echo "make lab-aluno  copia os exercícios para $(EXERCICIOS) e abre o JupyterLab sem os menus do professor"
	@echo "make pdf      imprime o livro inteiro em $(PDF) (Chromium), para ler sem internet"
	@echo "make publish  constrói e publica _build/html no ramo $(PUBLISH_BRANCH) de $(PUBLISH_REMOTE) (GitHub Pages)"
	@echo "make weights  congela a prosa do curso e treina nela o tokenizador e o modelo tiny (atencao/data/)"
	@echo "make weights-check  refaz o treino sobre o corpus congelado e confere a perda de validação"
	@echo "make grade SUBMISSOES=pasta_ou_zip WORKSPACE=pasta   corrige uma turma"

all: book

$(STAMP): requirements.txt pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "erro: $(PYTHON) não encontrado; o curso usa Python 3.11 ou 3.12 (make PYTHON=python3.12)"; exit 1; }
	@$(PYTHON) -c '$(PYTHON_OK)' || { echo "erro: $(PYTHON) é o Python $$($(PYTHON) -c 'import platform; print(platform.python_version())'); o curso usa 3.11 ou 3.12 (make PYTHON=python3.12)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@if $(BIN)/python -c "import urllib.request as u; u.urlopen('$(TORCH_INDEX)/torch/', timeout=15)" 2>/dev/null; then \
	  cp requirements.txt $(VENV)/requisitos.txt; \
	else \
	  echo "aviso: o índice $(TORCH_INDEX) não responde; o torch +cpu tem de vir de uma pasta de rodas local (PIP_FIND_LINKS)"; \
	  grep -v -- '^--extra-index-url $(TORCH_INDEX)' requirements.txt > $(VENV)/requisitos.txt; \
	fi
	$(BIN)/python -m pip install --quiet -r $(VENV)/requisitos.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

deps: $(STAMP)

# Pacotes Debian: chromium (testes no navegador) e bubblewrap (caixa de areia
# da correção). Só instala o que falta; precisa de root ou sudo.
$(APT_STAMP):
	@mkdir -p .cache
	@need=""; \
	command -v chromium >/dev/null || need="$$need chromium"; \
	command -v bwrap >/dev/null || need="$$need bubblewrap"; \
	command -v prlimit >/dev/null || need="$$need util-linux"; \
	command -v openssl >/dev/null || need="$$need openssl"; \
	fonts=$$(fc-list 2>/dev/null | grep -ci dejavu || true); [ "$$fonts" != "0" ] || need="$$need fonts-dejavu-core"; \
	if [ -n "$$need" ]; then \
	  echo "instalando pacotes Debian:$$need"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$need >/dev/null; \
	fi
	touch $@

apt-deps: $(APT_STAMP)
sandbox-deps: $(APT_STAMP)

release: $(STAMP)
	$(BIN)/python -m autograder.release

book: $(STAMP)
	$(BIN)/jupyter-book build . --builder html -W -n --keep-going
	@echo "livro em _build/html/index.html"

serve:
	@test -f _build/html/index.html || { echo "rode 'make book' antes"; exit 1; }
	$(BIN)/python -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html

# Testes em camadas (tests/conftest.py marca pela pasta e pelas fixtures o que cada teste
# precisa). `check` é o laço rápido: nada de livro construído, navegador, sandbox, nbgrader
# nem ambientes novos. `test` (o da CI) roda o `check` primeiro e para nele se falhar; depois,
# num processo só (um Chromium, cada turma corrigida uma vez), todas as outras camadas.
# A ordem dos testes é sorteada a cada rodada (pytest-randomly; a semente sai no cabeçalho e
# `make check PYTEST_ARGS=--randomly-seed=N` repete a ordem; `-p no:randomly` desliga).
NEEDS := book or browser or sandbox or nbgrader or env
PYTEST := $(BIN)/python -m pytest -q -ra
PYTEST_ARGS ?=

# As camadas lentas em processos do pytest-xdist, um arquivo inteiro por processo
# (`--dist loadfile`: as fixtures de módulo e a turma de todos os cadernos, que mora num
# arquivo só, são feitas uma vez). Um processo a mais que os núcleos cobre as esperas (limites de
# tempo, o pip); com 3, os 2 núcleos da CI ficam ocupados do começo ao fim (amostras do
# /proc/stat em 2026-12-05): a rodada é limitada pela CPU, e mais processos não a encurtam
# (com 4: 1.174 s contra 1.120 s com 3, cada arquivo ~36 % mais lento, 5,9 GB de memória).
SLOW_WORKERS ?= 3
# `--no-loadscope-reorder`: os arquivos na ordem da coleta, os mais caros primeiro
# (HEAVY_FILES em tests/conftest.py), não pelo número de testes de cada um.
XDIST_GROUPS = -n $(SLOW_WORKERS) --dist loadfile --no-loadscope-reorder
BOOK_LOG := .cache/livro.log

# dois processos (pytest-xdist), uma thread do OpenMP cada: os 2 núcleos da CI
check: $(STAMP)
	OMP_NUM_THREADS=1 $(PYTEST) -n 2 -m "not ($(NEEDS) or slow)" --durations=10 $(PYTEST_ARGS)

check-atencao: $(STAMP)
	$(PYTEST) tests/atencao -m "not slow" $(PYTEST_ARGS)

check-exercises: $(STAMP)
	$(PYTEST) tests/exercises -m "not slow" $(PYTEST_ARGS)

check-grader: $(STAMP)
	$(PYTEST) tests/grader -m "not slow" $(PYTEST_ARGS)

check-book: $(STAMP) book
	$(PYTEST) tests/book tests/book_sources $(PYTEST_ARGS)

e2e-grader: $(STAMP) $(APT_STAMP)
	$(PYTEST) tests/grader_e2e --durations=15 $(PYTEST_ARGS)

e2e-nbgrader: $(STAMP)
	$(PYTEST) tests/nbgrader --durations=10 $(PYTEST_ARGS)

e2e-site: $(STAMP) $(APT_STAMP) book
	$(PYTEST) tests/site --durations=10 $(PYTEST_ARGS)

e2e-env: $(STAMP)
	$(PYTEST) tests/env --durations=10 $(PYTEST_ARGS)

# Os ambientes novos que a camada env pede (tests/support/venv_util.py), construídos antes de
# tudo, ao lado do .venv: o pip instala com um núcleo só, e o outro ficava parado (~50 s numa
# máquina de 2). O teste que chega antes do fim espera pela trava do ambiente. A saída fica em
# $(TEST_VENVS_LOG); o `make test` encerra o grupo do processo ao terminar, com sucesso ou não.
TEST_VENVS := requirements-aluno.txt binder/requirements.txt
TEST_VENVS_LOG := .cache/ambientes-de-teste.log
TEST_VENVS_PID := .cache/ambientes-de-teste.pid
STOP_TEST_VENVS = kill -- -$$(cat $(TEST_VENVS_PID) 2>/dev/null) 2>/dev/null || true

test-venvs:
	@mkdir -p .cache
	@setsid $(PYTHON) tests/support/venv_util.py $(TEST_VENVS) > $(TEST_VENVS_LOG) 2>&1 & echo $$! > $(TEST_VENVS_PID)

# O livro é construído ao lado do `check` (um kernel por vez: sobra núcleo), com a saída em
# $(BOOK_LOG); se o `check` falha, o livro é interrompido e o `make test` para ali.
test: test-venvs $(STAMP) $(APT_STAMP)
	@echo "== make check: a camada rápida (para aqui se falhar); o livro é construído ao lado, em $(BOOK_LOG) =="
	@setsid $(MAKE) --no-print-directory book > $(BOOK_LOG) 2>&1 & book=$$!; \
	if ! $(MAKE) --no-print-directory check; then kill -- -$$book 2>/dev/null || true; wait $$book 2>/dev/null || true; $(STOP_TEST_VENVS); exit 1; fi; \
	echo "== o livro (make book) =="; \
	if ! wait $$book; then cat $(BOOK_LOG); echo "erro: o livro não foi construído (a saída inteira está acima)"; $(STOP_TEST_VENVS); exit 1; fi; \
	grep -E "Executed notebook|build succeeded|livro em" $(BOOK_LOG) | sed -E 's/^.*\/book\//book\//' || true
	@echo "== as outras camadas: $(NEEDS), slow ($(SLOW_WORKERS) processos) =="
	@status=0; $(MAKE) --no-print-directory e2e || status=$$?; $(STOP_TEST_VENVS); exit $$status

# todas as camadas lentas (as de `make test` depois do check; precisa do livro construído)
e2e: $(STAMP) $(APT_STAMP)
	OMP_NUM_THREADS=1 $(PYTEST) $(XDIST_GROUPS) -m "$(NEEDS) or slow" --durations=25 $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python bench/run.py

grade: $(STAMP) $(APT_STAMP)
	@test -n "$(SUBMISSOES)" -a -n "$(WORKSPACE)" || { echo "uso: make grade SUBMISSOES=pasta_ou_zip WORKSPACE=pasta [JOBS=2]"; exit 1; }
	$(BIN)/python -m autograder grade "$(SUBMISSOES)" --workspace "$(WORKSPACE)" --jobs $(JOBS)

# JupyterLab de aluno no ambiente completo: o nbgrader (do professor) vem com
# extensões que o aluno não deve ver (formgrader, criar tarefa, lista de
# cursos). Elas ficam desligadas numa pasta de configuração só do aluno
# (JUPYTER_CONFIG_DIR); o JupyterLab do professor continua com tudo. Quem
# instala só requirements-aluno.txt não tem nbgrader nenhum.
# Os JSON são os que `jupyter labextension disable --level=user` e `jupyter
# server extension disable --user` escreveriam. JUPYTER_PREFER_ENV_PATH=0 põe a
# pasta do aluno acima da configuração do ambiente virtual (onde o nbgrader
# liga as suas extensões), senão a do ambiente venceria.
STUDENT_ENV := JUPYTER_CONFIG_DIR=$(CURDIR)/$(STUDENT_JUPYTER) JUPYTER_PREFER_ENV_PATH=0
$(STUDENT_JUPYTER)/.pronto: Makefile
	mkdir -p $(STUDENT_JUPYTER)/labconfig
	echo '{"disabledExtensions": {"@jupyter/nbgrader:formgrader": true, "@jupyter/nbgrader:create-assignment": true, "@jupyter/nbgrader:course-list": true}}' \
	  > $(STUDENT_JUPYTER)/labconfig/page_config.json
	echo '{"ServerApp": {"jpserver_extensions": {"nbgrader.server_extensions.formgrader": false, "nbgrader.server_extensions.course_list": false}}}' \
	  > $(STUDENT_JUPYTER)/jupyter_server_config.json
	touch $@

student-config: $(STUDENT_JUPYTER)/.pronto

lab-aluno: $(STAMP) $(STUDENT_JUPYTER)/.pronto
	$(BIN)/python -m atencao.copiar_exercicios "$(EXERCICIOS)"
	$(STUDENT_ENV) $(BIN)/jupyter lab "$(EXERCICIOS)"

# Publicação à mão (quem não usa o .github/workflows/livro.yml): o _build/html
# do `make book` vira o único commit do ramo gh-pages (ghp-import, fixado em
# requirements.txt), enviado ao remoto. No GitHub: Settings → Pages → Source:
# "Deploy from a branch", gh-pages. --no-jekyll: sem ele o Pages esconde _static/.
publish: book
	$(BIN)/ghp-import --no-jekyll --force --push --remote $(PUBLISH_REMOTE) --branch $(PUBLISH_BRANCH) \
	  --message "livro construído de $$(git rev-parse --short HEAD)" _build/html
	@echo "publicado no ramo $(PUBLISH_BRANCH) de $(PUBLISH_REMOTE)"

# O livro inteiro num PDF: a página única (singlehtml) impressa pelo Chromium
# do Debian, depois de o MathJax compor as fórmulas (book/print_pdf.py).
pdf: $(STAMP) $(APT_STAMP)
	$(BIN)/jupyter-book build . --builder singlehtml -W -n --keep-going
	$(BIN)/python book/print_pdf.py _build/singlehtml $(PDF)

clean:
	rm -rf _build .pytest_cache

# Pesos do modelo de linguagem do cap. 8 e 12 (python -m atencao.lm): congela a prosa
# do livro e dos cadernos em atencao/data/corpus.json (com os valores colados da última
# construção do livro, em _build/: rode `make book` antes), treina o tokenizador BPE e
# o modelo tiny nela e grava atencao/data/ (pesos, ficha, curva de treino). Avisa se o
# corpus congelado era mais velho que o livro. `make weights-check` refaz o treino sobre
# o corpus já congelado e confere que a perda de validação é a mesma (REPRO_TOLERANCE).
weights: $(STAMP)
	$(BIN)/python -m atencao.lm

weights-check: $(STAMP)
	ATENCAO_REFAZ_PESOS=1 $(BIN)/python -m pytest -q tests/atencao/test_lm.py -k reproduces
