import sys

# Bug: one pass only - reports the farthest distance from town 1.
data = sys.stdin.read().split()
n = int(data[0])
adj = [[] for _ in range(n + 1)]
for i in range(n - 1):
    u, v, w = int(data[1 + 3 * i]), int(data[2 + 3 * i]), int(data[3 + 3 * i])
    adj[u].append((v, w))
    adj[v].append((u, w))
dist = [-1] * (n + 1)
dist[1] = 0
st = [1]
while st:
    u = st.pop()
    for v, w in adj[u]:
        if dist[v] < 0:
            dist[v] = dist[u] + w
            st.append(v)
print(max(dist))
