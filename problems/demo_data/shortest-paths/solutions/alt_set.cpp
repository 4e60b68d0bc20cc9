#include <bits/stdc++.h>
using namespace std;
// Correct alternative: Dijkstra on a std::set with decrease-key by erase/insert.
int main() {
    int n, m;
    scanf("%d %d", &n, &m);
    vector<vector<pair<int, int>>> g(n + 1);
    for (int i = 0; i < m; ++i) {
        int u, v, w;
        scanf("%d %d %d", &u, &v, &w);
        g[u].push_back({v, w});
        g[v].push_back({u, w});
    }
    vector<long long> d(n + 1, -1);
    set<pair<long long, int>> s;
    d[1] = 0;
    s.insert({0, 1});
    while (!s.empty()) {
        auto [du, u] = *s.begin();
        s.erase(s.begin());
        for (auto [v, w] : g[u]) {
            if (d[v] == -1 || du + w < d[v]) {
                if (d[v] != -1) s.erase({d[v], v});
                d[v] = du + w;
                s.insert({d[v], v});
            }
        }
    }
    for (int i = 1; i <= n; ++i) printf("%lld%c", d[i], i == n ? '\n' : ' ');
}
