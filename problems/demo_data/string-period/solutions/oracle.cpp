#include <bits/stdc++.h>
using namespace std;
// Prefix function: the longest proper border has length pi[n-1]; period = n - border.
int main() {
    string s;
    cin >> s;
    int n = s.size();
    vector<int> pi(n, 0);
    for (int i = 1; i < n; ++i) {
        int k = pi[i - 1];
        while (k > 0 && s[i] != s[k]) k = pi[k - 1];
        if (s[i] == s[k]) ++k;
        pi[i] = k;
    }
    printf("%d\n", n - pi[n - 1]);
}
