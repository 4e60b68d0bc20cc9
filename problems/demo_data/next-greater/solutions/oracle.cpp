#include <bits/stdc++.h>
using namespace std;
// Monotonic stack scanned from the right: O(n).
int main() {
    int n;
    if (scanf("%d", &n) != 1) return 0;
    vector<long long> a(n);
    for (auto &x : a) scanf("%lld", &x);
    vector<int> ans(n, -1), st;
    for (int i = n - 1; i >= 0; --i) {
        while (!st.empty() && a[st.back()] <= a[i]) st.pop_back();
        ans[i] = st.empty() ? -1 : st.back() + 1;
        st.push_back(i);
    }
    string out;
    for (int i = 0; i < n; ++i) {
        if (i) out += ' ';
        out += to_string(ans[i]);
    }
    puts(out.c_str());
}
