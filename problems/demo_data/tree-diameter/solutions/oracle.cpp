#include <bits/stdc++.h>
using namespace std;
int n;
vector<vector<pair<int, long long>>> g;
// Iterative traversal: returns distances from s.
vector<long long> dists(int s) {
    vector<long long> d(n + 1, -1);
    vector<int> st = {s};
    d[s] = 0;
    while (!st.empty()) {
        int u = st.back();
        st.pop_back();
        for (auto [v, w] : g[u])
            if (d[v] < 0) { d[v] = d[u] + w; st.push_back(v); }
    }
    return d;
}
int main() {
    scanf("%d", &n);
    g.assign(n + 1, {});
    for (int i = 0; i < n - 1; ++i) {
        int u, v; long long w;
        scanf("%d %d %lld", &u, &v, &w);
        g[u].push_back({v, w});
        g[v].push_back({u, w});
    }
    auto d1 = dists(1);
    int far = max_element(d1.begin() + 1, d1.end()) - d1.begin();
    auto d2 = dists(far);
    printf("%lld\n", *max_element(d2.begin() + 1, d2.end()));
}
