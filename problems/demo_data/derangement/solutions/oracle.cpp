#include <bits/stdc++.h>
using namespace std;
// Swap neighbours in pairs; with n odd the last three guests rotate instead.
int main() {
    int t;
    scanf("%d", &t);
    while (t--) {
        int n;
        scanf("%d", &n);
        if (n == 1) { puts("-1"); continue; }
        vector<int> p(n + 1);
        for (int i = 1; i + 1 <= n; i += 2) { p[i] = i + 1; p[i + 1] = i; }
        if (n % 2 == 1) { p[n - 2] = n - 1; p[n - 1] = n; p[n] = n - 2; }
        string out;
        for (int i = 1; i <= n; ++i) {
            if (i > 1) out += ' ';
            out += to_string(p[i]);
        }
        puts(out.c_str());
    }
}
