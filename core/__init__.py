"""The bottom layer every app may use and that imports no app: typed env helpers, htmx helpers,
permissions, queue access and the embedded Redis. See README "Architecture" for the layers."""
