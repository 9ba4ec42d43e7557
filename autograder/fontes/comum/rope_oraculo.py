def _rope_complexa(x, start=0, base=10000.0):
    x64 = x.to(torch.float64)
    T, d = x64.shape[-2], x64.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)       # (d/2,)
    pos = torch.arange(start, start + T, dtype=torch.float64)               # (T,)
    giro = torch.polar(torch.ones(T, d // 2, dtype=torch.float64), pos[:, None] * theta)
    z = torch.view_as_complex(x64.unflatten(-1, (-1, 2)).contiguous())     # (..., T, d/2)
    return torch.view_as_real(z * giro).flatten(-2)                         # (..., T, d)
