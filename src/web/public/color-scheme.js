// Runs before the app bundle so a saved dark scheme does not flash light on load.
(function () {
  try {
    var saved = window.localStorage.getItem('rampart-color-scheme');
    var scheme = saved === 'dark' || saved === 'light' ? saved : 'light';
    document.documentElement.setAttribute('data-mantine-color-scheme', scheme);
  } catch (e) {
    /* storage unavailable: keep the default */
  }
})();
