// The course server's pages as a student uses them, in headless Chromium driven by playwright-core
// (scripts/test-course-page.sh installs both): sign in with the token, pick an alias, upload a file
// through the form, watch the page wait in the queue and turn into the verdicts, open the
// leaderboard. Prints "WHAT<tab>ok" or "WHAT<tab>what it saw" per check; screenshots into OUT.
//
//   node scripts/course-page.cjs URL TOKEN FILE OUT
const { chromium } = require(process.env.PLAYWRIGHT);

const [url, token, file, out] = process.argv.slice(2);

async function main() {
    const browser = await chromium.launch({
        executablePath: process.env.BROWSER,
        args: ['--no-sandbox', '--disable-gpu'],
    });
    const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
    const check = (what, ok, saw) => console.log(`${what}\t${ok ? 'ok' : String(saw).replace(/\s+/g, ' ')}`);
    // A script the page ran (the file's <script> shown as HTML) would open a dialog.
    let dialogs = 0;
    page.on('dialog', (dialog) => { dialogs += 1; dialog.dismiss(); });

    await page.goto(`${url}/`);
    await page.fill('input[name=token]', token);
    await page.click('button:has-text("Sign in")');
    const signedIn = await page.textContent('body');
    check('signed in with the token', signedIn.includes('Signed in as ann (s1)'), signedIn.slice(0, 200));
    await page.fill('input[name=alias]', 'warp-speed');
    await page.click('button:has-text("Set")');
    check('the alias set', (await page.textContent('body')).includes('Yours: warp-speed'), 'no alias');

    const form = 'form[action="/weeks/03-mmm-tiled/submit"]';
    await page.setInputFiles(`${form} input[type=file]`, file);
    await page.click(`${form} button`);
    await page.waitForURL(/\/submissions\/\d+$/);
    const waiting = await page.textContent('strong');
    check('the new page shows its place in the queue', waiting === 'queued: 1 before it', waiting);
    await page.screenshot({ path: `${out}/1-queued.png`, fullPage: true });
    require('fs').writeFileSync(`${out}/queued`, '');  // the test's worker starts now

    // The page reloads itself while it waits; no click.
    await page.waitForSelector('strong:has-text("graded")', { timeout: 60000 });
    const verdict = await page.textContent('td.PASS');
    check('the graded page shows the verdicts', verdict === 'PASS', verdict);
    await page.click('summary:has-text("The file handed in")');
    const shown = await page.textContent('details[open] pre');
    check('the file is shown as text', shown.includes('<script>alert("handed in")</script>'), shown.slice(0, 200));
    await page.screenshot({ path: `${out}/2-graded.png`, fullPage: true });

    await page.goto(`${url}/weeks/03-mmm-tiled/leaderboard`);
    const rows = await page.$$eval('tr', (trs) => trs.map((tr) => tr.innerText.replace(/\s+/g, ' ').trim()));
    // The stand-in's time ratio is 1 + (the file's length modulo 100) / 100: Bob's 1.25, Ann's 1.86.
    check('a student without an alias is listed, not named', rows[1] === '1 (no alias) 1.250', rows.join(' | '));
    check('the alias listed, as the student\'s own', rows[2] === '2 warp-speed (you) 1.860', rows.join(' | '));
    await page.screenshot({ path: `${out}/3-leaderboard.png`, fullPage: true });
    check('no script ran', dialogs === 0, `${dialogs} dialogs`);
    await browser.close();
}

main().catch((err) => {
    console.log(`the browser's run\t${String(err).split('\n')[0]}`);
    process.exit(1);
});
