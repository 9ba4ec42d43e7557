import sys as _sys

# O jsonschema (importado pelo nbformat) monta, ao ser importado, as gramáticas
# do pacote rfc3987_syntax: 1 a 10 s por processo, só para validar IRIs, o que
# nenhum notebook usa. Sem ele, o jsonschema apenas pula esse formato.
_sys.modules.setdefault("rfc3987_syntax", None)
