#include <bits/stdc++.h>
using namespace std;
// Bug: swaps neighbours in pairs but forgets that odd n leaves the last guest alone.
int main() {
    int t;
    scanf("%d", &t);
    while (t--) {
        int n;
        scanf("%d", &n);
        if (n == 1) { puts("-1"); continue; }
        vector<int> p(n + 1);
        for (int i = 1; i <= n; ++i) p[i] = i;
        for (int i = 1; i + 1 <= n; i += 2) swap(p[i], p[i + 1]);
        for (int i = 1; i <= n; ++i) printf("%d%c", p[i], i == n ? '\n' : ' ');
    }
}
