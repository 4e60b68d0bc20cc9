#include <bits/stdc++.h>
using namespace std;
// Correct alternative: iterative post-order, two longest child chains.
int main() {
    int n;
    scanf("%d", &n);
    vector<vector<pair<int, int>>> g(n + 1);
    for (int i = 0; i < n - 1; ++i) {
        int u, v, w;
        scanf("%d %d %d", &u, &v, &w);
        g[u].push_back({v, w});
        g[v].push_back({u, w});
    }
    vector<int> order, par(n + 1, 0);
    vector<long long> up(n + 1, 0), down(n + 1, 0);
    order.push_back(1);
    par[1] = -1;
    for (size_t i = 0; i < order.size(); ++i) {
        int u = order[i];
        for (auto [v, w] : g[u])
            if (v != par[u]) { par[v] = u; up[v] = w; order.push_back(v); }
    }
    long long best = 0;
    vector<long long> second(n + 1, 0);
    for (int i = n - 1; i > 0; --i) {
        int u = order[i], p = par[u];
        long long c = down[u] + up[u];
        if (c > down[p]) { second[p] = down[p]; down[p] = c; }
        else if (c > second[p]) second[p] = c;
    }
    for (int u = 1; u <= n; ++u) best = max(best, down[u] + second[u]);
    printf("%lld\n", best);
}
