const token = process.env.NPM_TOKEN || '${npm}';
