#!/usr/bin/env Rscript
# Reference numbers for benchgate's statistics, computed by R itself.
#
# usage: Rscript tests/tools/r_reference.R INPUT.csv OUTPUT.csv
#
# For every (filename, configuration) of a compare.js-format CSV this writes R's
# own mean, t.test (Welch, two-sided: statistic, parameter = df, p.value), the
# confidence stars, qt()-based accuracy half-widths for risks 0.05/0.01/0.001,
# the printed "%.2f %" / "±%.2f%" strings, and p.adjust(p, "holm") over the
# whole file. Rows are in C-locale order of paste(filename, " ", configuration).
# Numbers are written with 17 significant digits, so they round-trip exactly.
#
# Where t.test stops ("data are essentially constant") the row records the error
# and uses benchgate's documented convention (p = 1 for equal means, else 0) so
# the Holm adjustment covers the same set of p-values as benchgate's.
# Base R only: the tests read the CSV this writes; CI needs no R.

invisible(Sys.setlocale("LC_COLLATE", "C"))
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 2) stop("usage: Rscript r_reference.R INPUT.csv OUTPUT.csv")

samples <- read.csv(args[1], colClasses = c("character", "character", "character", "numeric", "numeric"),
                    encoding = "UTF-8", strip.white = FALSE)
key <- paste(samples$filename, samples$configuration, sep = "\r")
pairs <- unique(data.frame(key = key, filename = samples$filename, configuration = samples$configuration,
                           stringsAsFactors = FALSE))
pair_names <- paste(pairs$filename, pairs$configuration)
pairs <- pairs[order(pair_names, pairs$filename, method = "radix"), ]

num <- function(x) ifelse(is.na(x), "NA", sprintf("%.17g", x))
rows <- lapply(seq_len(nrow(pairs)), function(i) {
  group <- samples[key == pairs$key[i], ]
  old <- group$rate[group$binary == "old"]
  new <- group$rate[group$binary == "new"]
  old_mu <- mean(old)
  new_mu <- mean(new)
  improvement <- (new_mu - old_mu) / old_mu * 100
  out <- list(filename = pairs$filename[i], configuration = pairs$configuration[i],
              n_old = length(old), n_new = length(new), mean_old = num(old_mu), mean_new = num(new_mu),
              improvement = num(improvement), improvement_text = sprintf("%.2f %%", improvement),
              t = "NA", df = "NA", p = NA_real_, confidence = "NA",
              accuracy_1 = "NA", accuracy_2 = "NA", accuracy_3 = "NA",
              accuracy_1_text = "NA", accuracy_2_text = "NA", accuracy_3_text = "NA", t_test_error = "")
  if (length(old) > 1 && length(new) > 1) {
    test <- tryCatch(t.test(rate ~ binary, data = group), error = function(e) conditionMessage(e))
    if (is.character(test)) {
      out$t_test_error <- test
      out$p <- if (new_mu == old_mu) 1 else 0
      out$confidence <- if (out$p < 0.001) "***" else ""
    } else {
      out$t <- num(unname(test$statistic))
      out$df <- num(unname(test$parameter))
      out$p <- test$p.value
      out$confidence <- if (test$p.value < 0.001) "***" else if (test$p.value < 0.01) "**"
                        else if (test$p.value < 0.05) "*" else ""
      shared_se <- sqrt(var(old) / length(old) + var(new) / length(new))
      for (k in 1:3) {
        risk <- c(0.05, 0.01, 0.001)[k]
        accuracy <- qt(1 - risk / 2, test$parameter) * shared_se / old_mu * 100
        out[[paste0("accuracy_", k)]] <- num(unname(accuracy))
        out[[paste0("accuracy_", k, "_text")]] <- sprintf("\u00b1%.2f%%", accuracy)
      }
    }
  }
  out
})
table <- do.call(rbind, lapply(rows, function(r) as.data.frame(r, stringsAsFactors = FALSE)))
table$p_holm <- num(p.adjust(table$p, "holm"))
table$p <- num(table$p)
write.csv(table, args[2], row.names = FALSE, fileEncoding = "UTF-8", na = "NA")
