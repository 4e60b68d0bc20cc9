import random


def gen_range_based_input():
    h = random.choice([random.randint(1, 10), random.randint(1, 300), 300])
    w = random.choice([random.randint(1, 10), random.randint(1, 300), 300])
    density = random.choice([0.0, 0.01, 0.05, 0.1, 0.2, 0.4])
    rows = []
    for _ in range(h):
        rows.append("".join("#" if random.random() < density else "." for _ in range(w)))
    return f"{h} {w}\n" + "\n".join(rows) + "\n"
