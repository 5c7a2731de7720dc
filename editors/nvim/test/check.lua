-- Headless check of factory.lua: opens $FWF_FILE, waits for the server's diagnostics and
-- writes what Neovim saw to $OUT. Run by tests/editors.rs.
vim.g.factory_path = os.getenv('FACTORY_BIN')
require('factory')
vim.cmd('edit ' .. os.getenv('FWF_FILE'))
local ok = vim.wait(15000, function() return #vim.diagnostic.get(0) > 0 end, 50)
local out = {}
table.insert(out, 'filetype=' .. vim.bo.filetype)
table.insert(out, 'clients=' .. #vim.lsp.buf_get_clients(0))
for _, d in ipairs(vim.diagnostic.get(0)) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
  table.insert(out, string.format('diag %d:%d %s', d.lnum, d.col, tostring(code)))
end
table.insert(out, 'waited=' .. tostring(ok))
vim.fn.writefile(out, os.getenv('OUT'))
vim.cmd('qa!')
