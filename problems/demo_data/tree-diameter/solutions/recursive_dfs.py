import sys

# Correct idea (two DFS passes) but plain recursion: Python's default recursion
# limit (1000) is exceeded on deep trees such as a long path -> RecursionError.
data = sys.stdin.read().split()
n = int(data[0])
adj = [[] for _ in range(n + 1)]
for i in range(n - 1):
    u, v, w = int(data[1 + 3 * i]), int(data[2 + 3 * i]), int(data[3 + 3 * i])
    adj[u].append((v, w))
    adj[v].append((u, w))


def dfs(u, p, d, dist):
    dist[u] = d
    for v, w in adj[u]:
        if v != p:
            dfs(v, u, d + w, dist)


dist = [0] * (n + 1)
dfs(1, 0, 0, dist)
a = max(range(1, n + 1), key=lambda x: dist[x])
dist = [0] * (n + 1)
dfs(a, 0, 0, dist)
print(max(dist))
