#include "InputPolicy.h"

#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QKeyEvent>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QWheelEvent>

namespace octo::app {

namespace {
/// The spin box, combo box or slider a widget belongs to (a spin box's line edit counts).
QWidget* editorOf(QObject* o) {
    for (auto* w = qobject_cast<QWidget*>(o); w; w = w->parentWidget()) {
        if (qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QComboBox*>(w) ||
            qobject_cast<QAbstractSlider*>(w))
            return w;
        if (w->isWindow())
            break;
    }
    return nullptr;
}
} // namespace

InputPolicy::InputPolicy(QWidget* home, QObject* parent) : QObject(parent), home_(home) {}

void InputPolicy::applyFocusPolicy(QWidget* root) {
    for (QWidget* w : root->findChildren<QWidget*>())
        if (qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QComboBox*>(w) ||
            qobject_cast<QAbstractSlider*>(w))
            w->setFocusPolicy(Qt::StrongFocus);
}

bool InputPolicy::eventFilter(QObject* watched, QEvent* event) {
    switch (event->type()) {
    case QEvent::ShortcutOverride: {
        // A spin box claims every printable key; Space and letters are no numbers: let the
        // window's shortcuts have them.
        auto* key = static_cast<QKeyEvent*>(event);
        QWidget* editor = editorOf(watched);
        const bool plain = !(key->modifiers() & ~(Qt::ShiftModifier | Qt::KeypadModifier));
        const bool letter = key->key() >= Qt::Key_A && key->key() <= Qt::Key_Z;
        if (editor && qobject_cast<QAbstractSpinBox*>(editor) && plain &&
            (key->key() == Qt::Key_Space || letter)) {
            event->ignore();
            return true;
        }
        break;
    }
    case QEvent::KeyPress: {
        auto* key = static_cast<QKeyEvent*>(event);
        if (key->key() != Qt::Key_Escape || !home_)
            break;
        QWidget* focus = QApplication::focusWidget();
        QWidget* editor = editorOf(focus);
        if (!editor && !qobject_cast<QLineEdit*>(focus))
            break;
        if (watched != focus)
            break; // handle once, at the focused widget
        // Esc discards the typed text: re-show the current value before focus-out commits it.
        if (auto* d = qobject_cast<QDoubleSpinBox*>(editor)) {
            const QSignalBlocker b(d);
            d->setValue(d->value());
        } else if (auto* i = qobject_cast<QSpinBox*>(editor)) {
            const QSignalBlocker b(i);
            i->setValue(i->value());
        }
        home_->setFocus(Qt::ShortcutFocusReason);
        return true;
    }
    case QEvent::Wheel: {
        QWidget* editor = editorOf(watched);
        if (editor && !editor->hasFocus() && watched == editor) {
            event->ignore(); // propagates to the scroll area around the dock
            return true;
        }
        break;
    }
    default:
        break;
    }
    return QObject::eventFilter(watched, event);
}

} // namespace octo::app
