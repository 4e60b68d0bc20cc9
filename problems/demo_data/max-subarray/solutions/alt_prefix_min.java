import java.io.*;
import java.util.*;

// Correct alternative: best = max over r of prefix[r] - min prefix before r.
public class Main {
    public static void main(String[] args) throws IOException {
        StreamTokenizer st = new StreamTokenizer(new BufferedReader(new InputStreamReader(System.in)));
        st.resetSyntax();
        st.wordChars('-', '-');
        st.wordChars('0', '9');
        st.whitespaceChars(0, ' ');
        st.nextToken();
        int n = Integer.parseInt(st.sval);
        long pre = 0, minPre = 0, best = Long.MIN_VALUE;
        for (int i = 0; i < n; i++) {
            st.nextToken();
            pre += Long.parseLong(st.sval);
            best = Math.max(best, pre - minPre);
            minPre = Math.min(minPre, pre);
        }
        System.out.println(best);
    }
}
