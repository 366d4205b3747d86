"""Buffer reuse (placeholder)."""


def plan_buffers(prog, donate=()):
    return {}


def check_donation(arrs, donate):
    return None
