import random
import sys

# Correct alternative: shuffle until no fixed point (about e tries on average).
data = sys.stdin.read().split()
t = int(data[0])
out = []
for k in range(1, t + 1):
    n = int(data[k])
    if n == 1:
        out.append("-1")
        continue
    p = list(range(1, n + 1))
    while True:
        random.shuffle(p)
        if all(p[i] != i + 1 for i in range(n)):
            break
    out.append(" ".join(map(str, p)))
print("\n".join(out))
