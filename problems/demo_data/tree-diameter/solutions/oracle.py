import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    adj = [[] for _ in range(n + 1)]
    for i in range(n - 1):
        u, v, w = int(data[1 + 3 * i]), int(data[2 + 3 * i]), int(data[3 + 3 * i])
        adj[u].append((v, w))
        adj[v].append((u, w))

    def far_from(s):
        dist = [-1] * (n + 1)
        dist[s] = 0
        stack = [s]
        while stack:
            u = stack.pop()
            du = dist[u]
            for v, w in adj[u]:
                if dist[v] < 0:
                    dist[v] = du + w
                    stack.append(v)
        best = max(range(1, n + 1), key=dist.__getitem__)
        return best, dist[best]

    a, _ = far_from(1)
    _, d = far_from(a)
    print(d)


main()
