import random


def _grid(h, w, density):
    return [["#" if random.random() < density else "." for _ in range(w)] for _ in range(h)]


def _render(g):
    return f"{len(g)} {len(g[0])}\n" + "\n".join("".join(r) for r in g) + "\n"


# Targets seeding the start before checking it: a tree on the start cell.
def gen_hacking_input_start_blocked():
    g = _grid(random.randint(1, 300), random.randint(1, 300), random.choice([0.0, 0.05]))
    g[0][0] = "#"
    return _render(g)


# Targets ignoring a tree on the finish cell.
def gen_hacking_input_finish_blocked():
    g = _grid(random.randint(1, 300), random.randint(1, 300), random.choice([0.0, 0.05]))
    g[-1][-1] = "#"
    return _render(g)


# Targets 32-bit sums of residues and missing modulo: a large almost free grid.
def gen_hacking_input_big_free():
    return _render(_grid(300, 300, random.choice([0.0, 0.001])))
