-- Neovim support for .fwf workflows: filetype, comment string and the factory language
-- server. Works with Neovim 0.7 (Debian's) and later: it uses vim.lsp.start_client,
-- not vim.lsp.start (0.8+). Put this file in ~/.config/nvim/lua/ and add
-- `require('factory')` to init.lua (see editors/README.md).

local M = {}

-- Filetype: *.fwf is `fwf`.
vim.cmd([[
  augroup factory_fwf_filetype
    autocmd!
    autocmd BufRead,BufNewFile *.fwf setfiletype fwf
  augroup END
]])

local client_id = nil

local function root_dir(path)
  local markers = { '.git', '.factory', 'prompts' }
  local dir = vim.fn.fnamemodify(path, ':p:h')
  while dir and dir ~= '/' do
    for _, m in ipairs(markers) do
      if vim.fn.isdirectory(dir .. '/' .. m) == 1 or vim.fn.filereadable(dir .. '/' .. m) == 1 then
        return dir
      end
    end
    dir = vim.fn.fnamemodify(dir, ':h')
  end
  return vim.fn.getcwd()
end

function M.attach(bufnr)
  if client_id == nil or vim.lsp.get_client_by_id(client_id) == nil then
    client_id = vim.lsp.start_client({
      name = 'factory',
      cmd = { vim.g.factory_path or 'factory', 'lsp' },
      root_dir = root_dir(vim.api.nvim_buf_get_name(bufnr)),
    })
  end
  if client_id then
    vim.lsp.buf_attach_client(bufnr, client_id)
  end
end

vim.cmd([[
  augroup factory_fwf_lsp
    autocmd!
    autocmd FileType fwf setlocal commentstring=//\ %s shiftwidth=4 expandtab
    autocmd FileType fwf lua require('factory').attach(tonumber(vim.fn.expand('<abuf>')))
  augroup END
]])

return M
