// Site-wide behaviour. Page-specific scripts live beside this file; no inline scripts (CSP).
