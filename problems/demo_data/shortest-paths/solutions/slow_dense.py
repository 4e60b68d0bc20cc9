import sys

# Dijkstra with a linear scan for the closest unfinished crossroad: O(n^2).
data = sys.stdin.read().split()
n, m = int(data[0]), int(data[1])
adj = [[] for _ in range(n + 1)]
for k in range(m):
    u, v, w = int(data[2 + 3 * k]), int(data[3 + 3 * k]), int(data[4 + 3 * k])
    adj[u].append((v, w))
    adj[v].append((u, w))
INF = float("inf")
dist = [INF] * (n + 1)
done = [False] * (n + 1)
dist[1] = 0
for _ in range(n):
    best, u = INF, -1
    for i in range(1, n + 1):
        if not done[i] and dist[i] < best:
            best, u = dist[i], i
    if u < 0:
        break
    done[u] = True
    for v, w in adj[u]:
        if best + w < dist[v]:
            dist[v] = best + w
print(" ".join(str(d) if d != INF else "-1" for d in dist[1:]))
