import java.io.*;
import java.util.*;

// Correct alternative: full 2D table with a padded border.
public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader br = new BufferedReader(new InputStreamReader(System.in));
        StringTokenizer st = new StringTokenizer(br.readLine());
        int h = Integer.parseInt(st.nextToken()), w = Integer.parseInt(st.nextToken());
        final long MOD = 1_000_000_007L;
        long[][] dp = new long[h + 1][w + 1];
        for (int r = 1; r <= h; r++) {
            String row = br.readLine().trim();
            for (int c = 1; c <= w; c++) {
                if (row.charAt(c - 1) == '#') continue;
                if (r == 1 && c == 1) dp[r][c] = 1;
                else dp[r][c] = (dp[r - 1][c] + dp[r][c - 1]) % MOD;
            }
        }
        System.out.println(dp[h][w]);
    }
}
