#include <bits/stdc++.h>
using namespace std;
// Bug: distances kept in int; fine for bushy random trees, overflows on long paths.
int n;
vector<vector<pair<int, int>>> g;
vector<int> dists(int s) {
    vector<int> d(n + 1, -1);
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
        int u, v, w;
        scanf("%d %d %d", &u, &v, &w);
        g[u].push_back({v, w});
        g[v].push_back({u, w});
    }
    auto d1 = dists(1);
    int far = max_element(d1.begin() + 1, d1.end()) - d1.begin();
    auto d2 = dists(far);
    printf("%d\n", *max_element(d2.begin() + 1, d2.end()));
}
