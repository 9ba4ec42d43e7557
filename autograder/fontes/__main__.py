from . import build_all

for p in build_all():
    print(f"escrito: {p}")
