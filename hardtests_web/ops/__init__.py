"""Operations of a deployment: the janitor, the worker's self-checks, deep health.

Site wiring (it may import every app): `serve`, the `janitor` command, the checked worker
class and /healthz/deep use it.
"""
