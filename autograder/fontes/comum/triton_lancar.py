def _kernel_triton(nome, kernel):
    """O que o lançador (travado) vai lançar é um kernel do Triton, escrito com `@triton.jit`?

    No seu Jupyter, o objeto é conferido direto. Na correção, o seu kernel mora no kernel do
    aluno e chega aqui como um objeto remoto: o lançador o lança lá (`kernel[grade](...)`), e a
    pergunta vai para lá também (os nomes dos argumentos que o `@triton.jit` guarda)."""
    __tracebackhide__ = True
    corretor = _sys.modules.get("_autograder_harness")
    if corretor is not None and isinstance(kernel, corretor.Remote):
        try:
            argumentos = kernel.arg_names
            ok = isinstance(argumentos, list) and all(isinstance(a, str) for a in argumentos)
        except Exception:  # noqa: BLE001 - sem `arg_names`: não é um kernel do Triton
            ok = False
        veio = "outra coisa"
    else:
        ok = isinstance(kernel, triton.runtime.jit.KernelInterface)
        veio = type(kernel).__name__
    if not ok:
        raise FalhaNoTeste(
            f"`{nome}` não é um kernel do Triton (veio {veio}). Escreva-o com `@triton.jit` na célula "
            f"da tarefa: quem o lança é o lançador da célula travada logo abaixo dela.")


def _escreveu(nome, saida, buffer):
    """O lançador cria a saída cheia de NaN (ou de -1, se for de inteiros): um kernel que não
    escreve nela não passa, nem por acaso."""
    __tracebackhide__ = True
    vazio = torch.isnan(saida) if saida.is_floating_point() else saida == -1
    if saida.numel() and bool(vazio.all()):
        valor = "NaN" if saida.is_floating_point() else "-1"
        raise FalhaNoTeste(
            f"`{nome}` não escreveu nada em `{buffer}`: esperava a saída do kernel, mas `{buffer}` "
            f"continua como o lançador a criou (toda {valor}). Faltou o `tl.store`?")
